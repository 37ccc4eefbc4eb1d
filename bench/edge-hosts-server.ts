/**
 * The server side of the many-hosts edge benchmark, in its own process: HOSTS projects, each
 * with a live production deployment of one shared 10 KiB file, on SQLite or (DATABASE_URL) on
 * PostgreSQL, served by three edges: one with the route cache as `slipway serve` sets it up
 * (answers kept for the bench's length, see `routeTtlMs`), one whose cache hears a routing
 * change of some other project 10 times a second, and one with the previous cache (answers kept
 * for 1 s). And HOSTS more projects (`own-<i>`), each with its own
 * artifact holding a 10 KiB file of its own (HOSTS manifests and files, as sites really are),
 * served by a fourth edge set up like the first. Prints one JSON line, then serves until killed.
 */
import { mkdtempSync } from 'node:fs';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../server/platform/config.ts';
import { createHostResolver } from '../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer } from '../server/features/serving/edge/server.ts';
import { newId } from '../server/core/ids.ts';
import { closeDeps, createDeps } from '../server/runtime.ts';
import { insertLiveSites, organizationRow, storeOwnSites, storeSite } from '../test/helpers/edge.ts';

const hosts = Number(process.env.HOSTS ?? 10_000);
const dataDir = mkdtempSync(join(tmpdir(), 'slipway-bench-hosts-'));
const deps = await createDeps(
  loadConfig({
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // The edge's memory bounds, to compare (the bounds before 2026-11-26, for 10,000 single-file
    // sites: SLIPWAY_EDGE_MANIFEST_CACHE=106KB, about 500 manifests, SLIPWAY_EDGE_FILE_CACHE=64MiB).
    ...Object.fromEntries(
      ['SLIPWAY_EDGE_MANIFEST_CACHE', 'SLIPWAY_EDGE_FILE_CACHE'].flatMap((k) =>
        process.env[k] ? [[k, process.env[k]]] : [],
      ),
    ),
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
const ownNames = Array.from({ length: hosts }, (_, i) => `own-${i}`);
await insertLiveSites(
  deps.db,
  orgId,
  await storeOwnSites(deps.config.artifactsDir, ownNames, 'file-10k.txt', 10 * 1024),
  ownNames,
);

const edge = (ttlMs: number) => {
  const resolver = createHostResolver(deps, { ttlMs });
  const server = createEdgeServer({
    resolver,
    artifactsRoot: deps.config.artifactsDir,
    // As `slipway serve` sets them.
    manifestCacheBytes: deps.config.edgeManifestCacheBytes,
    fileCacheBytes: deps.config.edgeFileCacheBytes,
  });
  return { resolver, server };
};
/**
 * At least the bench's length (10 minutes) instead of SLIPWAY_EDGE_ROUTE_TTL (60 s): the hosts
 * are all looked up at once below, so with 60 s they would all expire together about a minute in,
 * and whichever round ran then would measure 10,000 look-ups in 6 s rather than the steady state
 * (where each host is looked up again once a lifetime: about 170 look-ups a second at 10,000
 * hosts and 60 s, not measured here).
 */
const routeTtlMs = Math.max(deps.config.edgeRouteTtlMs, 600_000);
const current = edge(routeTtlMs);
const churned = edge(routeTtlMs);
const previous = edge(1000);
const own = edge(routeTtlMs);
// Every host looked up once, as an edge that has served them all for a while has: the bench
// measures that steady state.
const warmStart = performance.now();
for (let i = 0; i < hosts; i += 50) {
  const batch = Array.from({ length: Math.min(50, hosts - i) }, (_, k) => `site-${i + k}.localhost`);
  await Promise.all(
    batch.flatMap((h) => [
      current.resolver.resolve(h),
      churned.resolver.resolve(h),
      own.resolver.resolve(h.replace('site-', 'own-')),
    ]),
  );
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
const [currentPort, churnedPort, previousPort, ownPort] = await Promise.all(
  [current, churned, previous, own].map((e) => listen(e.server)),
);
// Every own host's file requested once, so its manifest and file are in memory as the shared
// file is after the first request.
const get = (host: string) =>
  new Promise<void>((resolve, reject) => {
    request({ port: ownPort, host: '127.0.0.1', path: '/file-10k.txt', headers: { host } }, (res) => {
      res.resume().once('end', resolve);
    })
      .once('error', reject)
      .end();
  });
for (let i = 0; i < hosts; i += 50) {
  await Promise.all(ownNames.slice(i, i + 50).map((name) => get(`${name}.localhost`)));
}
process.stdout.write(
  JSON.stringify({
    currentUrl: `http://127.0.0.1:${currentPort}`,
    churnedUrl: `http://127.0.0.1:${churnedPort}`,
    previousUrl: `http://127.0.0.1:${previousPort}`,
    ownUrl: `http://127.0.0.1:${ownPort}`,
    hosts,
    ttlMs: routeTtlMs,
  }) + '\n',
);
process.on('SIGTERM', () => {
  void closeDeps(deps).finally(() => process.exit(0));
});
