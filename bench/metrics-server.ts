/**
 * The server side of the metrics benchmark, in its own process: the API and an edge over one
 * database (SQLite, or PostgreSQL with DATABASE_URL), as `slipway serve` runs them, with 30 days
 * of per-minute traffic for one project. The same minutes are also stored the way they were
 * before hour and day rollups (`legacy_request_rollups`, JSON columns), and GET /legacy on the
 * control port answers 30-day metrics the old way (every minute row read and parsed on this
 * event loop), so both can be measured in the same run. Prints one JSON line, then serves until
 * killed.
 */
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { buildApp } from '../server/app.ts';
import { loadConfig } from '../server/platform/config.ts';
import { createHostResolver } from '../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer } from '../server/features/serving/edge/server.ts';
import {
  BUCKET_COUNT,
  emptyHistogram,
  mergeHistograms,
  parseHistogram,
  percentile,
} from '../server/core/histogram.ts';
import { createRequestRecorder } from '../server/features/monitoring/request-recorder.ts';
import { closeDeps, createDeps } from '../server/runtime.ts';
import {
  mergeStatusCounts,
  parseStatusCounts,
  writeRollupDeltas,
  type RollupDelta,
} from '../server/features/monitoring/record-requests.ts';
import { getMetrics } from '../server/features/monitoring/get-metrics.ts';
import { createToken } from '../server/features/identity/users/create-token.ts';
import { findOrCreateUser } from '../server/features/identity/users/find-or-create-user.ts';
import { insertLiveSites, storeSite } from '../test/helpers/edge.ts';

const MINUTE = 60_000;
const DAYS = Number(process.env.BENCH_METRICS_DAYS ?? 30);
const dataDir = mkdtempSync(join(tmpdir(), 'slipway-bench-metrics-'));
const deps = await createDeps(
  loadConfig({
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000',
  }),
  { log: pino({ level: 'silent' }) },
);
const user = await findOrCreateUser(deps, 'bench@example.com');
const { token } = await createToken(deps, user.id, 'bench');
const { id: orgId } = await deps.db
  .selectFrom('organizations')
  .select('id')
  .where('personal_user_id', '=', user.id)
  .executeTakeFirstOrThrow();
// Enterprise, with a limit the bench cannot reach: we measure the work, not the 429s.
await deps.db.updateTable('organizations').set({ plan: 'enterprise' }).where('id', '=', orgId).execute();
const artifactId = await storeSite(deps.config.artifactsDir, {
  'index.html': '<h1>bench</h1>\n',
  'file-10k.txt': 'x'.repeat(10 * 1024),
});
const [site] = await insertLiveSites(deps.db, orgId, artifactId, ['bench']);
const projectId = site!.project.id;

// 30 days of minutes, every one with traffic: a busy project's worst case.
const started = Date.now();
const end = Math.floor(Date.now() / MINUTE) * MINUTE;
let seed = 1;
const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
await deps.db.schema
  .createTable('legacy_request_rollups')
  .addColumn('project_id', 'text', (c) => c.notNull())
  .addColumn('minute', 'text', (c) => c.notNull())
  .addColumn('requests', 'integer', (c) => c.notNull())
  .addColumn('success', 'integer', (c) => c.notNull())
  .addColumn('errors', 'integer', (c) => c.notNull())
  .addColumn('bytes', 'bigint', (c) => c.notNull())
  .addColumn('latency_sum_ms', 'bigint', (c) => c.notNull())
  .addColumn('latency_hist', 'text', (c) => c.notNull())
  .addColumn('status_counts', 'text', (c) => c.notNull())
  .addPrimaryKeyConstraint('legacy_request_rollups_pk', ['project_id', 'minute'])
  .execute();
for (let dayStart = end - DAYS * 1440 * MINUTE; dayStart < end; dayStart += 1440 * MINUTE) {
  const deltas: RollupDelta[] = [];
  for (let m = dayStart; m < dayStart + 1440 * MINUTE && m < end; m += MINUTE) {
    const hist = emptyHistogram();
    let requests = 0;
    for (let b = 0; b < BUCKET_COUNT; b++) {
      const n = next() < 0.4 ? Math.floor(next() * 20) : 0;
      hist[b] = n;
      requests += n;
    }
    const statusCounts: Record<string, number> = {};
    let errors = 0;
    for (const code of ['404', '500', '502', '503']) {
      const n = next() < 0.3 ? Math.min(requests - errors, Math.floor(next() * 3)) : 0;
      if (n > 0) {
        statusCounts[code] = n;
        errors += n;
      }
    }
    deltas.push({
      projectId,
      minute: new Date(m).toISOString(),
      requests,
      success: requests - errors,
      errors,
      bytes: requests * 2048,
      latencySumMs: requests * 40,
      latencyHist: hist,
      statusCounts,
    });
  }
  await writeRollupDeltas(deps, deltas);
  for (let i = 0; i < deltas.length; i += 200) {
    await deps.db
      .insertInto('legacy_request_rollups' as never)
      .values(
        deltas.slice(i, i + 200).map((d) => ({
          project_id: d.projectId,
          minute: d.minute,
          requests: d.requests,
          success: d.success,
          errors: d.errors,
          bytes: d.bytes,
          latency_sum_ms: d.latencySumMs,
          latency_hist: JSON.stringify(d.latencyHist),
          status_counts: JSON.stringify(d.statusCounts),
        })),
      )
      .execute();
  }
}
const loadSeconds = Math.round((Date.now() - started) / 100) / 10;

interface LegacyRow {
  requests: number;
  errors: number;
  success: number;
  bytes: number | string;
  latency_sum_ms: number | string;
  latency_hist: string;
  status_counts: string;
}

/** The metrics computation before hour and day rollups (requests, errors, latency, bandwidth). */
async function legacyMetrics(periodMs: number) {
  const now = Date.now();
  const { rows } =
    await sql<LegacyRow>`select requests, errors, success, bytes, latency_sum_ms, latency_hist, status_counts
    from legacy_request_rollups where project_id = ${projectId}
    and minute >= ${new Date(now - periodMs).toISOString()} and minute <= ${new Date(now).toISOString()}`.execute(
      deps.db,
    );
  let requests = 0;
  let errors = 0;
  let success = 0;
  let bytes = 0;
  let latency = 0;
  for (const r of rows) {
    requests += Number(r.requests);
    errors += Number(r.errors);
    success += Number(r.success);
    bytes += Number(r.bytes);
    latency += Number(r.latency_sum_ms);
  }
  const byStatus = mergeStatusCounts(
    ...rows.filter((r) => r.errors > 0).map((r) => parseStatusCounts(r.status_counts)),
  );
  const hist = mergeHistograms(
    ...rows.filter((r) => r.requests > 0).map((r) => parseHistogram(r.latency_hist)),
  );
  return {
    requests: { total: requests, success, errors },
    errors: { total: errors, byStatus },
    latency: {
      avg: latency / requests,
      p50: percentile(hist, 50),
      p95: percentile(hist, 95),
      p99: percentile(hist, 99),
    },
    bandwidth: { total: bytes },
  };
}

const app = buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const recorder = createRequestRecorder(deps);
const edge = createEdgeServer({
  resolver: createHostResolver(deps),
  artifactsRoot: deps.config.artifactsDir,
  onRequest: (r) => recorder.record(r),
});
const actor = { userId: user.id, email: 'bench@example.com', tokenId: 'bench' };
// GET /legacy: 30 days the old way. GET /rollups: 30 days from the rollups, never from the
// cache (it is dropped first), as the API computes them. Both without HTTP framework or auth.
const control = createServer((req, res) => {
  if (req.url === '/legacy') {
    void legacyMetrics(30 * 1440 * MINUTE).then((m) => res.end(JSON.stringify(m)));
  } else if (req.url === '/rollups') {
    deps.metrics.rollupsChanged();
    void getMetrics(deps, actor, projectId, { period: '30d' }).then((m) => res.end(JSON.stringify(m)));
  } else {
    res.writeHead(404).end();
  }
});
const listen = (s: ReturnType<typeof createServer>) =>
  new Promise<number>((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)),
  );
const [edgePort, controlPort] = await Promise.all([listen(edge), listen(control)]);
process.stdout.write(
  JSON.stringify({
    apiUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    edgeUrl: `http://127.0.0.1:${edgePort}`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    host: 'bench.localhost',
    token,
    projectId,
    loadSeconds,
  }) + '\n',
);
const stop = () => {
  edge.close();
  control.close();
  void app
    .close()
    .then(() => recorder.close())
    .then(() => closeDeps(deps))
    .then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
