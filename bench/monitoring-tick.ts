import { sql } from 'kysely';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Server } from 'node:http';
import { createEdgeServer } from '../server/features/serving/edge/server.ts';
import { createHostResolver } from '../server/features/serving/edge/resolve-host.ts';
import { FAILURE_LOOKBACK_MS } from '../server/features/monitoring/deployment-failed-alert.ts';
import { runMonitoringTick } from '../server/schedule/monitoring-tick.ts';
import { probeProductionUrls } from '../server/features/monitoring/probe-production.ts';
import { randomString } from '../server/core/ids.ts';
import { createRequestRecorder } from '../server/features/monitoring/request-recorder.ts';
import { edgeRecordingOptions } from '../server/roles/edge.ts';
import { recordRequests, type ServedRequest } from '../server/features/monitoring/record-requests.ts';
import type { DeploymentsTable, ProjectsTable } from '../server/platform/store/schema.ts';
import { createTestApp, type TestApp } from '../test/helpers/app.ts';
import { ManualClock } from '../test/helpers/clock.ts';
import { deploymentRow, listen, projectRow, storeSite } from '../test/helpers/edge.ts';
import { ratio, table } from './lib.ts';

const SIZES = [100, 1000, 10_000];
/** Deployments per project: 100k at 10k projects, the data set. */
const DEPLOYMENTS_PER_PROJECT = 10;
/** Share of projects with visitors in the last minutes (the rest are idle). */
const BUSY_SHARE = 0.01;
const MIN = 60_000;
const NOW = '2026-11-22T10:00:30.000Z';

async function insertChunks<T>(rows: T[], insert: (chunk: T[]) => Promise<unknown>, size = 500) {
  for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size));
}

/**
 * `count` copies of a stored artifact under new ids (the same files, a manifest each), as many
 * projects' own builds would be: the edge then reads a manifest per project it serves.
 */
export async function copyArtifact(root: string, artifactId: string, count: number): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(root, 'manifests', `${artifactId}.json`), 'utf8')) as {
    id: string;
  };
  const ids = Array.from({ length: count }, () => `art_${randomString(20)}`);
  for (let i = 0; i < ids.length; i += 200) {
    await Promise.all(
      ids
        .slice(i, i + 200)
        .map((id) => writeFile(join(root, 'manifests', `${id}.json`), JSON.stringify({ ...manifest, id }))),
    );
  }
  return ids;
}

/** `n` projects, each with a live production deployment of its own static site (one file) and 9 older ones. */
export async function load(t: TestApp, n: number, artifactIds: string[]) {
  const user = await t.user('bench@example.com');
  const now = t.deps.clock.now().getTime();
  const projects: ProjectsTable[] = [];
  const deployments: DeploymentsTable[] = [];
  for (let i = 0; i < n; i++) {
    const project = projectRow(user.orgId, new Date(now).toISOString(), { name: `bench-${i}` });
    const artifactId = artifactIds[i % artifactIds.length]!;
    for (let j = 0; j < DEPLOYMENTS_PER_PROJECT; j++) {
      const at = new Date(now - (DEPLOYMENTS_PER_PROJECT - j) * 86_400_000).toISOString();
      // One failure, days ago: outside the deployment_failed lookback, as most failures are.
      const failed = j === 3;
      const d = deploymentRow(project.id, at, {
        host: `${project.name}-${j}`,
        status: failed ? 'failed' : 'live',
        artifact_id: artifactId,
        ready_at: failed ? null : at,
      });
      deployments.push(d);
      if (!failed) project.production_deployment_id = d.id;
    }
    projects.push(project);
  }
  await insertChunks(projects, (c) => t.deps.db.insertInto('projects').values(c).execute(), 200);
  await insertChunks(deployments, (c) => t.deps.db.insertInto('deployments').values(c).execute(), 100);
  return projects;
}

interface Measured {
  ms: number;
  /** CPU time of this process (client, edge and database driver) per probe, over a run of probes alone. */
  cpuMsPerProbe: number;
  /** The deployment_failed rule's read of recent failures: as before (bound predicates, a scan), and now. */
  failedScanMs: number;
  failedIndexMs: number;
  healthRows: number;
  rollupRows: number;
}

/** Median time of 11 runs of `run`, ms. */
async function median(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 11; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return Math.round(times.sort((a, b) => a - b)[5]! * 100) / 100;
}

/**
 * This process's CPU time per probe (the probes' client, the edge, the database driver), median
 * of 5 runs of the probes alone a minute apart: past the batch, each run probes other projects.
 */
async function probeCpu(deps: Parameters<typeof probeProductionUrls>[0], clock: ManualClock) {
  const perProbe: number[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(MIN);
    const cpu = process.cpuUsage();
    const probed = await probeProductionUrls(deps);
    const used = process.cpuUsage(cpu);
    perProbe.push((used.user + used.system) / 1000 / probed);
  }
  return Math.round(perProbe.sort((a, b) => a - b)[2]! * 1000) / 1000;
}

async function count(t: TestApp, table: 'health_checks' | 'traffic_rollups') {
  const r = await t.deps.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** One monitoring run after a warm-up run, with an edge in the same process serving the projects. */
async function measure(n: number): Promise<Measured> {
  const clock = new ManualClock(NOW);
  const t = await createTestApp({ clock });
  let edge: Server | undefined;
  const recorder = createRequestRecorder(t.deps, { intervalMs: 1000 });
  try {
    const artifactId = await storeSite(t.deps.config.artifactsDir, { 'index.html': '<h1>hello</h1>' });
    const projects = await load(t, n, await copyArtifact(t.deps.config.artifactsDir, artifactId, n));
    edge = createEdgeServer({
      // On the run's clock, as in production: a route looked up one run ago has expired by the next.
      resolver: createHostResolver(t.deps, {
        ttlMs: t.deps.config.edgeRouteTtlMs,
        now: () => clock.now().getTime(),
      }),
      artifactsRoot: t.deps.config.artifactsDir,
      onRequest: (r) => recorder.record(r),
      ...edgeRecordingOptions(t.deps),
    });
    const port = await listen(edge);
    const deps = { ...t.deps, config: { ...t.deps.config, edgeInternalUrl: `http://127.0.0.1:${port}` } };
    const busy = projects.slice(0, Math.max(1, Math.round(n * BUSY_SHARE)));
    const visit = async () => {
      const at = clock.now();
      const served: ServedRequest[] = busy.flatMap((p) =>
        Array.from({ length: 30 }, (_, i) => ({
          projectId: p.id,
          at,
          status: i === 0 ? 500 : 200,
          durationMs: 5,
          bytes: 100,
        })),
      );
      await recordRequests(t.deps, served);
    };
    await visit();
    await runMonitoringTick(deps);
    await recorder.flush();
    clock.advance(MIN);
    await visit();
    const health = await count(t, 'health_checks');
    const rollups = await count(t, 'traffic_rollups');
    const started = performance.now();
    await runMonitoringTick(deps);
    const ms = performance.now() - started;
    await recorder.flush();
    const healthRows = (await count(t, 'health_checks')) - health;
    const rollupRows = (await count(t, 'traffic_rollups')) - rollups;
    const cpuMsPerProbe = await probeCpu(deps, clock);
    const since = new Date(clock.now().getTime() - FAILURE_LOOKBACK_MS).toISOString();
    const failedScanMs = await median(() =>
      t.deps.db
        .selectFrom('deployments')
        .select('project_id')
        .distinct()
        .where('target', '=', 'production')
        .where('status', '=', 'failed')
        .where('updated_at', '>=', since)
        .execute(),
    );
    const failedIndexMs = await median(() =>
      t.deps.db
        .selectFrom('deployments')
        .select('project_id')
        .where(sql<boolean>`status = 'failed' and target = 'production'`)
        .where('updated_at', '>=', since)
        .execute(),
    );
    return {
      ms,
      cpuMsPerProbe,
      failedScanMs,
      failedIndexMs,
      healthRows,
      rollupRows,
    };
  } finally {
    await recorder.close();
    if (edge) await new Promise<void>((r) => edge!.close(() => r()));
    await t.close();
  }
}

/**
 * One monitoring run (probes, alert rules, pruning) at 100 / 1k / 10k projects with a live
 * production each (10 deployments per project), on SQLite and, when SLIPWAY_TEST_DATABASE_URL is
 * set, PostgreSQL; 1% of the projects have visitors. Each run is given as a share of the 60 s
 * interval and as a ratio to the 100-project run of the same database. Target: under 10% of the
 * interval at 10k projects; probes add no traffic rows.
 */
export async function benchMonitoringTick(): Promise<string> {
  const dialects: ('sqlite' | 'postgres')[] = ['sqlite'];
  if (process.env.SLIPWAY_TEST_DATABASE_URL) dialects.push('postgres');
  const only = process.env.BENCH_SIZES?.split(',').map(Number) ?? SIZES;
  const rows: Record<string, string | number>[] = [];
  const saved = process.env.SLIPWAY_TEST_DIALECT;
  try {
    for (const dialect of dialects) {
      process.env.SLIPWAY_TEST_DIALECT = dialect;
      let base = 0;
      for (const n of only) {
        const m = await measure(n);
        if (!base) base = m.ms;
        rows.push({
          database: dialect,
          projects: n,
          run_ms: Math.round(m.ms),
          of_interval_pct: ratio(m.ms, 60_000),
          vs_first_size: Math.round((m.ms / base) * 10) / 10,
          cpu_ms_per_probe: m.cpuMsPerProbe,
          health_rows: m.healthRows,
          probe_rollup_rows: m.rollupRows,
          failed_read_ms_before: m.failedScanMs,
          failed_read_ms_now: m.failedIndexMs,
        });
      }
    }
  } finally {
    if (saved === undefined) delete process.env.SLIPWAY_TEST_DIALECT;
    else process.env.SLIPWAY_TEST_DIALECT = saved;
  }
  return [
    `One monitoring run (second of two, a minute apart), ${DEPLOYMENTS_PER_PROJECT} deployments per project, ${BUSY_SHARE * 100}% of projects with visitors, an edge in the same process`,
    table(rows),
    "cpu_ms_per_probe: this process's CPU time (probe client, edge, database driver) per probe, median of 5 runs of the probes alone after the measured run; every project has its own artifact, and the edge's routes expire on the run's clock. probe_rollup_rows: traffic rows the run itself added (probes counted as visits). failed_read_ms: the deployment_failed rule's read of the last 24 hours' failures, median of 11, written as before (bound predicates: a scan) and now (literal predicates: the partial index of migration 016). Target: run under 10% of the 60 s interval at 10k projects.",
  ].join('\n');
}
