/**
 * The server side of the many-hosts edge benchmark, in its own process: HOSTS projects, each
 * with a live production deployment of one shared 10 KiB file, on SQLite or (DATABASE_URL) on
 * PostgreSQL, served by three edges: one with the route cache as `slipway serve` sets it up, one
 * whose cache hears a routing change of some other project 10 times a second, and one with the
 * previous cache (answers kept for 1 s). Prints one JSON line, then serves until killed.
 */
import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../server/config.ts';
import { createHostResolver } from '../server/edge/resolve-host.ts';
import { createEdgeServer } from '../server/edge/server.ts';
import { newId } from '../server/lib/ids.ts';
import { closeDeps, createDeps } from '../server/runtime.ts';
import { insertLiveSites, organizationRow, storeSite } from '../test/helpers/edge.ts';

const hosts = Number(process.env.HOSTS ?? 10_000);
const dataDir = mkdtempSync(join(tmpdir(), 'slipway-bench-hosts-'));
const deps = await createDeps(
  loadConfig({
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  }),
  { log: pino({ level: 'silent' }) },
);
const artifactId = await storeSite(deps.config.artifactsDir, { 'file-10k.txt': 'x'.repeat(10 * 1024) });
const orgId = newId('org');
await deps.db.insertInto('organizations').values(organizationRow(orgId)).execute();
const sites = await insertLiveSites(
  deps.db,
  orgId,
  artifactId,
  Array.from({ length: hosts }, (_, i) => `site-${i}`),
);
const projectIds = sites.map((s) => s.project.id);

const edge = (ttlMs: number) => {
  const resolver = createHostResolver(deps, { ttlMs });
  return { resolver, server: createEdgeServer({ resolver, artifactsRoot: deps.config.artifactsDir }) };
};
const current = edge(deps.config.edgeRouteTtlMs);
const churned = edge(deps.config.edgeRouteTtlMs);
const previous = edge(1000);
// Every host looked up once, as an edge that has served them all for a while has: the bench
// measures that steady state (answers still expire after SLIPWAY_EDGE_ROUTE_TTL while it runs).
const warmStart = performance.now();
for (let i = 0; i < hosts; i += 50) {
  const batch = Array.from({ length: Math.min(50, hosts - i) }, (_, k) => `site-${i + k}.localhost`);
  await Promise.all(batch.flatMap((h) => [current.resolver.resolve(h), churned.resolver.resolve(h)]));
}
process.stderr.write(
  `edge-hosts: ${hosts} hosts looked up in ${Math.round(performance.now() - warmStart)} ms\n`,
);
// Ten routing changes a second, each to a project picked at random (site-0, the one-host case's, included).
setInterval(() => churned.resolver.invalidate(projectIds[Math.floor(Math.random() * hosts)]), 100).unref();

const listen = (s: Server) =>
  new Promise<number>((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)),
  );
const [currentPort, churnedPort, previousPort] = await Promise.all(
  [current, churned, previous].map((e) => listen(e.server)),
);
process.stdout.write(
  JSON.stringify({
    currentUrl: `http://127.0.0.1:${currentPort}`,
    churnedUrl: `http://127.0.0.1:${churnedPort}`,
    previousUrl: `http://127.0.0.1:${previousPort}`,
    hosts,
    ttlMs: deps.config.edgeRouteTtlMs,
  }) + '\n',
);
process.on('SIGTERM', () => {
  void closeDeps(deps).finally(() => process.exit(0));
});
