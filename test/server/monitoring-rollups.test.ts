import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';
import { createCipher } from '../../server/core/secrets.ts';
import { bucketIndex, emptyHistogram, LATENCY_COLUMNS, percentile } from '../../server/core/histogram.ts';
import { pruneMonitoringData } from '../../server/features/monitoring/prune.ts';
import { rollupRanges } from '../../server/features/monitoring/rollup-ranges.ts';
import { getMetrics } from '../../server/features/monitoring/get-metrics.ts';
import { recordRequests, type ServedRequest } from '../../server/features/monitoring/record-requests.ts';
import {
  recordRuntimeSamples,
  type RuntimeSample,
} from '../../server/features/monitoring/record-runtime-samples.ts';
import { openStore, type Store } from '../../server/platform/store/db.ts';
import { binder } from '../../server/platform/store/prepared.ts';
import { allMigrations } from '../../server/platform/store/migrations/index.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { databaseForTest, testDialect } from '../helpers/database.ts';
import { insertProject } from '../helpers/edge.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const PERIODS = { '1h': HOUR, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY } as const;
const NOW = Date.parse('2026-11-22T10:17:31.250Z');
const floorTo = (t: number, unit: number) => Math.floor(t / unit) * unit;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** A deterministic pseudo-random sequence in [0, 1). */
function random(seed: number) {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

/**
 * What the metrics of `[since, until]` are by definition, computed from the raw requests and
 * samples: every minute that started within the period (from the top of its first hour when
 * the period is longer than the per-minute retention), the way the per-minute rows were read
 * before hour and day rollups existed.
 */
function reference(
  requests: readonly ServedRequest[],
  samples: readonly RuntimeSample[],
  sinceMs: number,
  untilMs: number,
  minuteRetentionMs: number,
) {
  let first = Math.ceil(sinceMs / MIN) * MIN;
  if (untilMs - sinceMs > minuteRetentionMs) first = floorTo(first, HOUR);
  const last = floorTo(untilMs, MIN);
  const inside = (at: Date) => floorTo(at.getTime(), MIN) >= first && floorTo(at.getTime(), MIN) <= last;
  const rs = requests.filter((r) => inside(r.at));
  const hist = emptyHistogram();
  const byStatus: Record<string, number> = {};
  let errors = 0;
  let latency = 0;
  let bytes = 0;
  for (const r of rs) {
    hist[bucketIndex(r.durationMs)]! += 1;
    latency += r.durationMs;
    bytes += r.bytes;
    if (r.status >= 400) {
      errors += 1;
      byStatus[String(r.status)] = (byStatus[String(r.status)] ?? 0) + 1;
    }
  }
  const total = rs.length;
  const metrics: Record<string, unknown> = {
    requests: { total, success: total - errors, errors },
    errors: { total: errors, rate: total === 0 ? 0 : round2((errors / total) * 100), byStatus },
    latency: {
      avg: total === 0 ? 0 : round2(latency / total),
      p50: percentile(hist, 50),
      p95: percentile(hist, 95),
      p99: percentile(hist, 99),
    },
    bandwidth: { total: bytes, unit: 'bytes' },
  };
  const ss = samples.filter((s) => inside(s.at));
  if (ss.length > 0) {
    const cpu = ss.map((s) => Math.round(s.cpuPercent * 100));
    const ram = ss.map((s) => s.ramBytes);
    metrics.cpu = {
      avg: round2(cpu.reduce((a, b) => a + b, 0) / ss.length / 100),
      max: round2(Math.max(...cpu) / 100),
    };
    metrics.ram = {
      avg: Math.round(ram.reduce((a, b) => a + b, 0) / ss.length),
      max: Math.max(...ram),
      unit: 'bytes',
    };
  }
  return metrics;
}

describe('rollup ranges', () => {
  it('cover exactly the minutes of the period, with the fewest rows', () => {
    const next = random(7);
    for (let i = 0; i < 200; i++) {
      const until = NOW + Math.floor(next() * 3 * DAY);
      const length = Math.floor(next() * 3 * DAY) + 1;
      const retention = next() < 0.5 ? 2 * DAY : HOUR;
      const ranges = rollupRanges(until - length, until, retention);
      const covered: number[] = [];
      for (const r of ranges) {
        const unit = { minute: MIN, hour: HOUR, day: DAY }[r.span];
        expect(Date.parse(r.from) % unit).toBe(0);
        expect(Date.parse(r.to) % unit).toBe(0);
        for (let m = Date.parse(r.from); m < Date.parse(r.to); m += MIN) covered.push(m);
      }
      let first = Math.ceil((until - length) / MIN) * MIN;
      if (length > retention) first = floorTo(first, HOUR);
      const expected: number[] = [];
      for (let m = first; m <= floorTo(until, MIN); m += MIN) expected.push(m);
      expect(covered.sort((a, b) => a - b)).toEqual(expected);
      expect(ranges.filter((r) => r.span === 'minute').length).toBeLessThanOrEqual(2);
    }
  });

  it('reads at most 30 days, 46 hours and 59 minutes for 30 days', () => {
    const ranges = rollupRanges(NOW - 30 * DAY, NOW, 2 * DAY);
    const count = (span: string, unit: number) =>
      ranges
        .filter((r) => r.span === span)
        .reduce((n, r) => n + (Date.parse(r.to) - Date.parse(r.from)) / unit, 0);
    expect(count('day', DAY)).toBe(29);
    expect(count('hour', HOUR)).toBeLessThanOrEqual(46);
    expect(count('minute', MIN)).toBeLessThanOrEqual(59);
  });
});

describe('metrics from minute, hour and day rollups', () => {
  let t: TestApp;
  let clock: ManualClock;
  let alice: TestUser;
  let projectId: string;
  const requests: ServedRequest[] = [];
  const samples: RuntimeSample[] = [];

  beforeAll(async () => {
    clock = new ManualClock(new Date(NOW).toISOString());
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    projectId = (await insertProject(t, alice.orgId, { name: 'rolled' })).id;
    const other = (await insertProject(t, alice.orgId, { name: 'other' })).id;
    const next = random(42);
    const statuses = [200, 200, 200, 201, 304, 404, 404, 500, 502, 503];
    // 33 days of traffic up to a day after NOW (later clocks below see it as the past), some of
    // it on the minutes around hour and day boundaries.
    for (let i = 0; i < 1500; i++) {
      let at = NOW - 33 * DAY + Math.floor(next() * 34 * DAY);
      if (i % 5 === 0) at = floorTo(at, i % 10 === 0 ? DAY : HOUR) - MIN + Math.floor(next() * 2 * MIN);
      requests.push({
        projectId,
        at: new Date(at),
        status: statuses[Math.floor(next() * statuses.length)]!,
        durationMs: Math.round(next() ** 3 * 12_000),
        bytes: Math.floor(next() * 100_000),
      });
      if (i % 3 === 0) {
        samples.push({
          projectId,
          deploymentId: i % 2 ? 'dpl_a' : 'dpl_b',
          at: new Date(at),
          cpuPercent: Math.floor(next() * 20_000) / 100,
          ramBytes: Math.floor(next() * 500_000_000),
        });
      }
    }
    for (let i = 0; i < requests.length; i += 100) await recordRequests(t.deps, requests.slice(i, i + 100));
    await recordRuntimeSamples(t.deps, samples);
    // Another project's traffic in the same minutes must not count.
    await recordRequests(
      t.deps,
      requests.slice(0, 200).map((r) => ({ ...r, projectId: other })),
    );
  });
  afterAll(() => t.close());

  const clocks = [0, -37 * MIN - 13_000, 59 * MIN, 13 * HOUR + 41 * MIN, DAY - 17 * MIN].map((d) => NOW + d);

  const compareAll = async () => {
    for (const now of clocks) {
      clock.set(new Date(now).toISOString());
      for (const [period, ms] of Object.entries(PERIODS)) {
        const res = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?period=${period}`);
        expect(res.status).toBe(200);
        const want = reference(requests, samples, now - ms, now, t.deps.config.metricsRetention.minuteMs);
        expect(res.body.data, `${period} at ${new Date(now).toISOString()}`).toEqual({
          period,
          metrics: want,
        });
      }
    }
  };

  it('answers every period exactly as the per-minute computation, across hours and days', async () => {
    // The 30-day period at these clocks has traffic, errors and samples to compare.
    clock.set(new Date(NOW).toISOString());
    const month = reference(requests, samples, NOW - 30 * DAY, NOW, 2 * DAY);
    expect((month.requests as { total: number }).total).toBeGreaterThan(1000);
    await compareAll();
  });

  it('keeps each hour and day row the exact sum of its minutes', async () => {
    const rows = await t.deps.db
      .selectFrom('traffic_rollups')
      .selectAll()
      .where('project_id', '=', projectId)
      .execute();
    const columns = [
      'requests',
      'success',
      'errors',
      'server_errors',
      'bytes',
      'latency_sum_ms',
      ...LATENCY_COLUMNS,
    ] as const;
    const sums = new Map<string, number[]>();
    for (const r of rows.filter((r) => r.span === 'minute')) {
      for (const [span, unit] of [
        ['hour', HOUR],
        ['day', DAY],
      ] as const) {
        const key = `${span} ${new Date(floorTo(Date.parse(r.bucket_start), unit)).toISOString()}`;
        const acc = sums.get(key) ?? columns.map(() => 0);
        columns.forEach((c, i) => (acc[i]! += Number(r[c])));
        sums.set(key, acc);
      }
    }
    const stored = new Map(
      rows
        .filter((r) => r.span !== 'minute')
        .map((r) => [`${r.span} ${r.bucket_start}`, columns.map((c) => Number(r[c]))]),
    );
    expect(stored.size).toBeGreaterThan(30);
    expect(stored).toEqual(sums);
  });

  it('still answers 7 and 30 days exactly once the old minutes are pruned', async () => {
    clock.set(new Date(NOW).toISOString());
    const pruned = await pruneMonitoringData(t.deps);
    expect(pruned.rollups).toBeGreaterThan(0);
    expect(pruned.runtimeSamples).toBeGreaterThan(0);
    const oldest = await t.deps.db
      .selectFrom('traffic_rollups')
      .select((eb) => eb.fn.min('bucket_start').as('oldest'))
      .where('span', '=', 'minute')
      .executeTakeFirstOrThrow();
    expect(Date.parse(String(oldest.oldest))).toBeGreaterThanOrEqual(NOW - 2 * DAY);
    // Clocks from NOW on: minutes older than 48 hours before NOW are gone.
    await compareAll();
  });
});

describe('retention', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date(NOW).toISOString());

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        SLIPWAY_METRICS_MINUTE_RETENTION: '3h',
        SLIPWAY_METRICS_HOUR_RETENTION: '32d',
        SLIPWAY_METRICS_DAY_RETENTION: '40d',
      },
    });
  });
  afterAll(() => t.close());

  it('deletes minute, hour and day rows and their status counts past their own setting', async () => {
    const alice = await t.user('alice@example.com');
    const p = await insertProject(t, alice.orgId);
    const ages = [2 * HOUR, 4 * HOUR, 31 * DAY, 33 * DAY, 39 * DAY, 41 * DAY];
    await recordRequests(
      t.deps,
      ages.map((age) => ({ projectId: p.id, at: new Date(NOW - age), status: 503, durationMs: 5, bytes: 1 })),
    );
    await recordRuntimeSamples(
      t.deps,
      ages.map((age) => ({
        projectId: p.id,
        deploymentId: 'dpl_a',
        at: new Date(NOW - age),
        cpuPercent: 1,
        ramBytes: 1,
      })),
    );
    await pruneMonitoringData(t.deps);
    const kept = async (table: 'traffic_rollups' | 'traffic_status_counts' | 'runtime_rollups') =>
      (
        await t.deps.db
          .selectFrom(table)
          .select(['span', 'bucket_start'])
          .where('project_id', '=', p.id)
          .orderBy('span')
          .orderBy('bucket_start')
          .execute()
      ).map((r) => `${r.span} ${r.bucket_start}`);
    const start = (age: number, unit: number) => new Date(floorTo(NOW - age, unit)).toISOString();
    const traffic = [
      ...[39 * DAY, 33 * DAY, 31 * DAY, 4 * HOUR, 2 * HOUR].map((a) => `day ${start(a, DAY)}`),
      ...[31 * DAY, 4 * HOUR, 2 * HOUR].map((a) => `hour ${start(a, HOUR)}`),
      `minute ${start(2 * HOUR, MIN)}`,
    ];
    // 4 and 2 hours ago can share a day: compare as sets of rows.
    expect(await kept('traffic_rollups')).toEqual([...new Set(traffic)]);
    expect(await kept('traffic_status_counts')).toEqual([...new Set(traffic)]);
    expect(await kept('runtime_rollups')).toEqual(
      [...new Set(traffic)].filter((k) => !k.startsWith('minute')),
    );
    const minutes = await t.deps.db
      .selectFrom('runtime_samples')
      .select('minute')
      .where('project_id', '=', p.id)
      .execute();
    expect(minutes).toEqual([{ minute: start(2 * HOUR, MIN) }]);
  });

  it('reuses an answer for a second unless this process wrote since, and sees another process’s writes after it', async () => {
    const alice = await t.user('alice@example.com');
    const p = await insertProject(t, alice.orgId);
    clock.set(new Date(NOW).toISOString());
    const total = async () =>
      (await t.call(alice, 'GET', `/v1/projects/${p.id}/metrics?period=1h&metric=requests`)).body.data.metrics
        .requests.total;
    const served = (n: number) =>
      Array.from({ length: n }, () => ({
        projectId: p.id,
        at: new Date(NOW - MIN),
        status: 200,
        durationMs: 1,
        bytes: 1,
      }));
    await recordRequests(t.deps, served(2));
    expect(await total()).toBe(2);
    // Through this process: seen at once.
    await recordRequests(t.deps, served(3));
    expect(await total()).toBe(5);
    // As another process (an edge elsewhere) would write: seen within a second.
    await t.deps.db
      .updateTable('traffic_rollups')
      .set({ requests: 50 })
      .where('project_id', '=', p.id)
      .where('span', '=', 'minute')
      .execute();
    expect(await total()).toBe(5);
    clock.advance(1_000);
    expect(await total()).toBe(50);
  });

  it('refuses retention too short for the periods it serves, naming the setting', () => {
    const base = {
      SLIPWAY_DATA_DIR: tmpdir(),
      SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    expect(() => loadConfig({ ...base, SLIPWAY_METRICS_HOUR_RETENTION: '7d' })).toThrow(
      /SLIPWAY_METRICS_HOUR_RETENTION must be at least 31d/,
    );
    expect(() => loadConfig({ ...base, SLIPWAY_METRICS_MINUTE_RETENTION: '30m' })).toThrow(
      /SLIPWAY_METRICS_MINUTE_RETENTION must be at least 2h/,
    );
    expect(loadConfig({ ...base, SLIPWAY_METRICS_DAY_RETENTION: '400d' }).metricsRetention.dayMs).toBe(
      400 * DAY,
    );
  });
});

it('migrating back-fills hours and days from the stored per-minute traffic and samples', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-rollups-'));
  const database = await databaseForTest(undefined, dataDir, true);
  const store = openStore({ databaseUrl: database.env.DATABASE_URL, dataDir });
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => allMigrations(store.dialect, createCipher(Buffer.alloc(32, 7))) },
  });
  try {
    expect((await migrator.migrateTo('014_list_indexes')).error).toBeUndefined();
    const hist = (bucket: number, n: number) => {
      const h = emptyHistogram();
      h[bucket] = n;
      return JSON.stringify(h);
    };
    // The JSON rows of before: two minutes of one hour, one of the next day, one corrupt row.
    const legacy = [
      ['prj_a', '2026-11-21T23:58:00.000Z', 10, 7, 3, 1000, 50, hist(2, 10), '{"404":1,"502":2}'],
      ['prj_a', '2026-11-21T23:59:00.000Z', 5, 5, 0, 500, 20, hist(4, 5), '{}'],
      ['prj_a', '2026-11-22T00:01:00.000Z', 4, 2, 2, 40, 8, '[0,4]', '{"502":2}'],
      ['prj_a', '2026-11-22T00:02:00.000Z', 1, 0, 1, 1, 1, 'not json', 'not json'],
    ] as const;
    for (const [
      project,
      minute,
      requests,
      success,
      errors,
      bytes,
      latency,
      latencyHist,
      statusCounts,
    ] of legacy) {
      await sql`insert into request_rollups (project_id, minute, requests, success, errors, bytes, latency_sum_ms, latency_hist, status_counts)
        values (${project}, ${minute}, ${requests}, ${success}, ${errors}, ${bytes}, ${latency}, ${latencyHist}, ${statusCounts})`.execute(
        store.db,
      );
    }
    for (const [minute, deployment, cpuMax] of [
      ['2026-11-21T23:58:00.000Z', 'dpl_a', 300],
      ['2026-11-21T23:58:00.000Z', 'dpl_b', 900],
      ['2026-11-22T00:01:00.000Z', 'dpl_a', 100],
    ] as const) {
      await store.db
        .insertInto('runtime_samples')
        .values({
          project_id: 'prj_a',
          minute,
          deployment_id: deployment,
          samples: 2,
          cpu_sum: cpuMax,
          cpu_max: cpuMax,
          ram_sum: 10,
          ram_max: 7,
        })
        .execute();
    }

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows = await store.db
      .selectFrom('traffic_rollups')
      .selectAll()
      .orderBy('span')
      .orderBy('bucket_start')
      .execute();
    const summary = rows.map((r) => [
      r.span,
      r.bucket_start,
      ...[
        r.requests,
        r.success,
        r.errors,
        r.server_errors,
        r.bytes,
        r.latency_sum_ms,
        r.lat_1,
        r.lat_2,
        r.lat_4,
      ].map(Number),
    ]);
    expect(summary).toEqual([
      ['day', '2026-11-21T00:00:00.000Z', 15, 12, 3, 2, 1500, 70, 0, 10, 5],
      ['day', '2026-11-22T00:00:00.000Z', 5, 2, 3, 2, 41, 9, 4, 0, 0],
      ['hour', '2026-11-21T23:00:00.000Z', 15, 12, 3, 2, 1500, 70, 0, 10, 5],
      ['hour', '2026-11-22T00:00:00.000Z', 5, 2, 3, 2, 41, 9, 4, 0, 0],
      ['minute', '2026-11-21T23:58:00.000Z', 10, 7, 3, 2, 1000, 50, 0, 10, 0],
      ['minute', '2026-11-21T23:59:00.000Z', 5, 5, 0, 0, 500, 20, 0, 0, 5],
      ['minute', '2026-11-22T00:01:00.000Z', 4, 2, 2, 2, 40, 8, 4, 0, 0],
      ['minute', '2026-11-22T00:02:00.000Z', 1, 0, 1, 0, 1, 1, 0, 0, 0],
    ]);
    const statuses = await store.db
      .selectFrom('traffic_status_counts')
      .select(['span', 'bucket_start', 'status', 'count'])
      .where('span', '=', 'day')
      .orderBy('bucket_start')
      .orderBy('status')
      .execute();
    expect(statuses.map((s) => [s.bucket_start, s.status, Number(s.count)])).toEqual([
      ['2026-11-21T00:00:00.000Z', 404, 1],
      ['2026-11-21T00:00:00.000Z', 502, 2],
      ['2026-11-22T00:00:00.000Z', 502, 2],
    ]);
    const runtime = await store.db
      .selectFrom('runtime_rollups')
      .selectAll()
      .orderBy('span')
      .orderBy('bucket_start')
      .execute();
    expect(
      runtime.map((r) => [
        r.span,
        r.bucket_start,
        ...[r.samples, r.cpu_sum, r.cpu_max, r.ram_sum, r.ram_max].map(Number),
      ]),
    ).toEqual([
      ['day', '2026-11-21T00:00:00.000Z', 4, 1200, 900, 20, 7],
      ['day', '2026-11-22T00:00:00.000Z', 2, 100, 100, 10, 7],
      ['hour', '2026-11-21T23:00:00.000Z', 4, 1200, 900, 20, 7],
      ['hour', '2026-11-22T00:00:00.000Z', 2, 100, 100, 10, 7],
    ]);
    const legacyLeft = await sql`select 1 from request_rollups`
      .execute(store.db)
      .catch((err: unknown) => err);
    expect(legacyLeft).toBeInstanceOf(Error);
  } finally {
    await store.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describe(`metrics query plans (${testDialect()})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(new Date(NOW).toISOString()) });
  });
  afterAll(() => t.close());

  it('reads each span’s range from the primary key, never a scan of the table', async () => {
    const alice = await t.user('alice@example.com');
    const p = await insertProject(t, alice.orgId);
    // The statements the answer runs, with their parameters, as the store binds them.
    const seen: { sql: string; parameters: unknown[] }[] = [];
    const run: Store['run'] = (statement, ...params) => {
      const { sql: text, values } = binder(t.deps.db, statement)(params);
      seen.push({ sql: text, parameters: values });
      return t.deps.store.run(statement, ...params);
    };
    const traced = { ...t.deps, store: { ...t.deps.store, run } };
    await recordRequests(t.deps, [
      { projectId: p.id, at: new Date(NOW), status: 500, durationMs: 1, bytes: 1 },
    ]);
    const actor = { userId: alice.userId, email: alice.email, tokenId: '' };
    await getMetrics(traced, actor, p.id, { period: '30d' });
    for (const table of ['traffic_rollups', 'traffic_status_counts']) {
      const q = seen.find((c) => c.sql.includes(`from "${table}"`));
      expect(q, table).toBeDefined();
      let text: string;
      if (testDialect() === 'sqlite') {
        const res = await t.deps.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${q!.sql}`, [...q!.parameters]),
        );
        text = res.rows.map((r) => r.detail).join('\n');
        expect(text, text).toMatch(
          new RegExp(
            `SEARCH ${table} USING INDEX sqlite_autoindex_${table}_1 \\(project_id=\\? AND span=\\? AND bucket_start>\\? AND bucket_start<\\?\\)`,
          ),
        );
        expect(text, text).not.toMatch(new RegExp(`SCAN ${table}`));
      } else {
        // Tables here are tiny, so PostgreSQL would rightly scan them: forbid the scan.
        text = await t.deps.db.transaction().execute(async (tx) => {
          await sql`set local enable_seqscan = off`.execute(tx);
          const res = await tx.executeQuery<{ 'QUERY PLAN': string }>(
            CompiledQuery.raw(`explain ${q!.sql}`, [...q!.parameters]),
          );
          return res.rows.map((r) => r['QUERY PLAN']).join('\n');
        });
        expect(text, text).toMatch(new RegExp(`${table}_pk`));
        expect(text, text).not.toMatch(/Seq Scan/);
      }
    }
  });
});
