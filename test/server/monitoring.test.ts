import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUCKET_BOUNDS_MS,
  BUCKET_COUNT,
  LATENCY_COLUMNS,
  bucketIndex,
  emptyHistogram,
  mergeHistograms,
  parseHistogram,
  percentile,
} from '../../server/core/histogram.ts';
import { newId } from '../../server/core/ids.ts';
import { openAlert, resolveAlert } from '../../server/features/monitoring/alerts.ts';
import { recordRequests, type ServedRequest } from '../../server/features/monitoring/record-requests.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const at = (iso: string) => new Date(iso);
const ago = (ms: number) => new Date(Date.parse(NOW) - ms);
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('latency histogram', () => {
  it('puts each latency in the bucket whose upper bound is the first at or above it', () => {
    expect(BUCKET_COUNT).toBe(25);
    expect(bucketIndex(0)).toBe(0);
    expect(bucketIndex(1)).toBe(0);
    expect(bucketIndex(1.5)).toBe(1);
    expect(bucketIndex(7)).toBe(4);
    expect(bucketIndex(8)).toBe(5);
    expect(bucketIndex(10_000)).toBe(23);
    expect(bucketIndex(10_001)).toBe(24);
    expect(bucketIndex(Number.NaN)).toBe(0);
    expect(bucketIndex(-5)).toBe(0);
  });

  it('merges bucket by bucket and reads shorter or corrupt stored arrays safely', () => {
    const a = emptyHistogram();
    a[0] = 2;
    a[24] = 1;
    expect(mergeHistograms(a, [1, 1])).toEqual([3, 1, ...new Array(22).fill(0), 1]);
    expect(parseHistogram('[0,4]')).toEqual([0, 4, ...new Array(23).fill(0)]);
    expect(parseHistogram('not json')).toEqual(emptyHistogram());
    expect(parseHistogram('{"a":1}')).toEqual(emptyHistogram());
  });

  it('answers percentiles as the upper bound of the exact nearest-rank value’s bucket', () => {
    expect(percentile(emptyHistogram(), 99)).toBe(0);
    // A deterministic spread of latencies from 0 to about 12 s.
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const values = Array.from({ length: 5000 }, () => Math.round(next() ** 3 * 12_000));
    const hist = emptyHistogram();
    for (const v of values) hist[bucketIndex(v)]! += 1;
    const sorted = [...values].sort((x, y) => x - y);
    for (const p of [1, 50, 90, 95, 99, 100]) {
      const exact = sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
      const got = percentile(hist, p);
      expect(got, `p${p}`).toBe(BUCKET_BOUNDS_MS[bucketIndex(exact)] ?? 10_000);
      expect(got).toBeGreaterThanOrEqual(Math.min(exact, 10_000));
    }
  });
});

describe('monitoring endpoints', () => {
  let t: TestApp;
  let clock: ManualClock;
  let alice: TestUser;
  let mallory: TestUser;
  let viewer: TestUser;

  const createProject = async (name: string) => {
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };

  const many = (n: number, r: Omit<ServedRequest, 'projectId'>, projectId: string): ServedRequest[] =>
    Array.from({ length: n }, () => ({ ...r, projectId }));

  beforeAll(async () => {
    clock = new ManualClock(NOW);
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    mallory = await t.user('mallory@example.com');
    viewer = await t.user('vera@example.com');
    await t.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: alice.orgId,
        email: viewer.email,
        user_id: viewer.userId,
        role: 'viewer',
        invited_at: NOW,
        joined_at: NOW,
      })
      .execute();
  });
  afterAll(() => t.close());

  describe('metrics', () => {
    let projectId: string;

    beforeAll(async () => {
      clock.set(NOW);
      projectId = await createProject('metrics-app');
      const other = await createProject('other-app');
      const m1 = at('2026-11-22T09:59:10.000Z');
      const m2 = at('2026-11-22T09:30:00.000Z');
      // The known mix of the last hour, written in two batches that share a minute.
      await recordRequests(t.deps, [
        ...many(30, { at: m1, status: 200, durationMs: 8, bytes: 1000 }, projectId),
        ...many(30, { at: m1, status: 304, durationMs: 40, bytes: 0 }, projectId),
        ...many(10, { at: m1, status: 404, durationMs: 3, bytes: 200 }, projectId),
        ...many(3, { at: m1, status: 500, durationMs: 1, bytes: 1 }, other),
      ]);
      await recordRequests(t.deps, [
        ...many(
          20,
          { at: new Date(m1.getTime() + 40_000), status: 200, durationMs: 8, bytes: 1000 },
          projectId,
        ),
        ...many(5, { at: m2, status: 500, durationMs: 700, bytes: 100 }, projectId),
        ...many(5, { at: m2, status: 502, durationMs: 2500, bytes: 100 }, projectId),
      ]);
      // Older traffic: 3 hours (24h only), 2 days (7d), 10 days (30d), 40 days (never).
      await recordRequests(t.deps, [
        ...many(7, { at: ago(3 * HOUR), status: 200, durationMs: 20, bytes: 10 }, projectId),
        ...many(11, { at: ago(2 * DAY), status: 503, durationMs: 20, bytes: 10 }, projectId),
        ...many(13, { at: ago(10 * DAY), status: 200, durationMs: 20, bytes: 10 }, projectId),
        ...many(17, { at: ago(40 * DAY), status: 200, durationMs: 20, bytes: 10 }, projectId),
      ]);
    });

    it('stores one row per project and minute with merged counters', async () => {
      const row = await t.deps.db
        .selectFrom('traffic_rollups')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('span', '=', 'minute')
        .where('bucket_start', '=', '2026-11-22T09:59:00.000Z')
        .executeTakeFirstOrThrow();
      // bigint columns: PostgreSQL returns them as strings.
      expect([row.requests, row.success, row.errors, row.server_errors].map(Number)).toEqual([90, 80, 10, 0]);
      expect(Number(row.bytes)).toBe(52_000);
      expect(Number(row.latency_sum_ms)).toBe(50 * 8 + 30 * 40 + 10 * 3);
      const statuses = await t.deps.db
        .selectFrom('traffic_status_counts')
        .select(['status', 'count'])
        .where('project_id', '=', projectId)
        .where('span', '=', 'minute')
        .where('bucket_start', '=', '2026-11-22T09:59:00.000Z')
        .execute();
      expect(statuses.map((s) => [s.status, Number(s.count)])).toEqual([[404, 10]]);
      const hist = LATENCY_COLUMNS.map((c) => Number(row[c]));
      expect(hist[bucketIndex(3)]).toBe(10);
      expect(hist[bucketIndex(8)]).toBe(50);
      expect(hist[bucketIndex(40)]).toBe(30);
      const rows = await t.deps.db
        .selectFrom('traffic_rollups')
        .select('bucket_start')
        .where('project_id', '=', projectId)
        .where('span', '=', 'minute')
        .execute();
      expect(rows).toHaveLength(6);
    });

    it('answers exact totals and bucket-accurate percentiles for the last hour', async () => {
      clock.set(NOW);
      const res = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?period=1h`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          period: '1h',
          metrics: {
            requests: { total: 100, success: 80, errors: 20 },
            errors: { total: 20, rate: 20, byStatus: { '404': 10, '500': 5, '502': 5 } },
            // Sorted: 3 ms x10, 8 ms x50, 40 ms x30, 700 ms x5, 2500 ms x5.
            latency: { avg: 176.3, p50: 10, p95: 750, p99: 3000 },
            bandwidth: { total: 53_000, unit: 'bytes' },
          },
        },
      });
    });

    it('defaults to 24h and widens with 7d and 30d', async () => {
      clock.set(NOW);
      const day = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics`);
      expect(day.body.data.period).toBe('24h');
      expect(day.body.data.metrics.requests).toEqual({ total: 107, success: 87, errors: 20 });
      const week = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?period=7d`);
      expect(week.body.data.metrics.requests).toEqual({ total: 118, success: 87, errors: 31 });
      expect(week.body.data.metrics.errors.byStatus).toEqual({ '404': 10, '500': 5, '502': 5, '503': 11 });
      const month = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?period=30d`);
      expect(month.body.data.metrics.requests.total).toBe(131);
      expect(month.body.data.metrics.bandwidth.total).toBe(53_000 + 70 + 110 + 130);
    });

    it('moves the window with the clock, and answers zeros without traffic', async () => {
      clock.set('2026-11-22T11:30:00.000Z');
      const res = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?period=1h`);
      expect(res.body.data.metrics).toEqual({
        requests: { total: 0, success: 0, errors: 0 },
        errors: { total: 0, rate: 0, byStatus: {} },
        latency: { avg: 0, p50: 0, p95: 0, p99: 0 },
        bandwidth: { total: 0, unit: 'bytes' },
      });
      // Traffic in the future of the clock is not counted yet.
      clock.set('2026-11-22T09:45:00.000Z');
      const before = await t.call(
        alice,
        'GET',
        `/v1/projects/${projectId}/metrics?period=1h&metric=requests`,
      );
      expect(before.body.data.metrics.requests.total).toBe(10);
      clock.set(NOW);
    });

    it('returns only the metric asked for; cpu and ram are absent without samples', async () => {
      const lat = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?period=1h&metric=latency`);
      expect(lat.body.data).toEqual({
        period: '1h',
        metrics: { latency: { avg: 176.3, p50: 10, p95: 750, p99: 3000 } },
      });
      const bw = await t.call(viewer, 'GET', `/v1/projects/${projectId}/metrics?metric=bandwidth`);
      expect(bw.status).toBe(200);
      expect(bw.body.data.metrics).toEqual({ bandwidth: { total: 53_070, unit: 'bytes' } });
      for (const metric of ['cpu', 'ram']) {
        const res = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?metric=${metric}`);
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual({ period: '24h', metrics: {} });
      }
    });

    it('rejects unknown periods, metrics and parameters', async () => {
      for (const [q, path] of [
        ['period=2h', 'period'],
        ['metric=disk', 'metric'],
        ['foo=1', 'foo'],
      ]) {
        const res = await t.call(alice, 'GET', `/v1/projects/${projectId}/metrics?${q}`);
        expect(res.status, q).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
      }
    });

    it('needs a token and hides other organizations’ projects', async () => {
      const none = await t.call(null, 'GET', `/v1/projects/${projectId}/metrics`);
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('UNAUTHORIZED');
      const other = await t.call(mallory, 'GET', `/v1/projects/${projectId}/metrics`);
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('NOT_FOUND');
      const missing = await t.call(alice, 'GET', `/v1/projects/prj_doesnotexist000000000/metrics`);
      expect(missing.status).toBe(404);
    });
  });

  describe('health', () => {
    const probe = (projectId: string, msAgo: number, ok: boolean, responseTime: number | null) =>
      t.deps.db
        .insertInto('health_checks')
        .values({
          project_id: projectId,
          at: ago(msAgo).toISOString(),
          ok: ok ? 1 : 0,
          status_code: ok ? 200 : responseTime === null ? null : 502,
          response_time_ms: responseTime,
          error: ok ? null : 'probe failed',
        })
        .execute();
    const health = async (projectId: string, user: TestUser = alice) => {
      const res = await t.call(user, 'GET', `/v1/projects/${projectId}/health`);
      expect(res.status).toBe(200);
      return res.body.data;
    };

    beforeAll(() => clock.set(NOW));

    it('is unknown without a probe in 24 hours', async () => {
      const id = await createProject('health-unknown');
      expect(await health(id)).toEqual({
        status: 'unknown',
        uptime: null,
        lastCheck: null,
        responseTime: null,
      });
      await probe(id, 25 * HOUR, true, 10);
      expect((await health(id)).status).toBe('unknown');
    });

    it('is healthy when the last probe passed and none failed in 15 minutes', async () => {
      const id = await createProject('health-ok');
      await probe(id, 30 * HOUR, false, null); // outside the window
      await probe(id, 20 * HOUR, false, 5000);
      await probe(id, 20 * MIN, true, 30);
      await probe(id, 10 * MIN, true, 25);
      await probe(id, 5 * MIN, true, 21);
      await probe(id, 1 * MIN, true, 17);
      expect(await health(id, viewer)).toEqual({
        status: 'healthy',
        uptime: 80,
        lastCheck: ago(MIN).toISOString(),
        responseTime: 17,
      });
    });

    it('is degraded when the last probe passed after a failure in the last 15 minutes', async () => {
      const id = await createProject('health-flaky');
      await probe(id, 14 * MIN, true, 20);
      await probe(id, 10 * MIN, false, 9000);
      await probe(id, 5 * MIN, true, 40);
      expect(await health(id)).toEqual({
        status: 'degraded',
        uptime: 66.67,
        lastCheck: ago(5 * MIN).toISOString(),
        responseTime: 40,
      });
      // Fifteen minutes later the failure no longer counts.
      clock.set(new Date(Date.parse(NOW) + 6 * MIN).toISOString());
      expect((await health(id)).status).toBe('healthy');
      clock.set(NOW);
    });

    it('is down when the last probe failed', async () => {
      const id = await createProject('health-down');
      await probe(id, 10 * MIN, true, 20);
      await probe(id, 1 * MIN, false, null);
      expect(await health(id)).toEqual({
        status: 'down',
        uptime: 50,
        lastCheck: ago(MIN).toISOString(),
        responseTime: null,
      });
    });

    it('needs a token and hides other organizations’ projects', async () => {
      const id = await createProject('health-private');
      expect((await t.call(null, 'GET', `/v1/projects/${id}/health`)).status).toBe(401);
      const other = await t.call(mallory, 'GET', `/v1/projects/${id}/health`);
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('NOT_FOUND');
    });
  });

  describe('alerts', () => {
    let projectId: string;
    const list = (q = '', user: TestUser | null = alice) =>
      t.call(user, 'GET', `/v1/projects/${projectId}/alerts${q}`);

    beforeAll(async () => {
      clock.set(NOW);
      projectId = await createProject('alerting');
    });

    it('opens one active alert per type, resolves it, and can open it again', async () => {
      const first = await openAlert(t.deps, projectId, 'high_error_rate', '12% of 200 requests failed');
      expect(first.opened).toBe(true);
      expect(first.alert).toMatchObject({
        projectId,
        type: 'high_error_rate',
        status: 'active',
        message: '12% of 200 requests failed',
        createdAt: NOW,
        resolvedAt: null,
      });
      expect(first.alert.id).toMatch(/^alt_[a-z0-9]{20}$/);

      clock.advance(MIN);
      const again = await openAlert(t.deps, projectId, 'high_error_rate', 'still failing');
      expect(again).toEqual({ opened: false, alert: first.alert });
      const failed = await openAlert(t.deps, projectId, 'deployment_failed', 'dpl_x failed');
      expect(failed.opened).toBe(true);

      clock.advance(MIN);
      const resolved = await resolveAlert(t.deps, projectId, 'high_error_rate');
      expect(resolved).toEqual({ ...first.alert, status: 'resolved', resolvedAt: clock.now().toISOString() });
      expect(await resolveAlert(t.deps, projectId, 'high_error_rate')).toBeNull();
      expect(await resolveAlert(t.deps, projectId, 'health_check_failed')).toBeNull();

      clock.advance(MIN);
      const reopened = await openAlert(t.deps, projectId, 'high_error_rate', 'failing again');
      expect(reopened.opened).toBe(true);
      expect(reopened.alert.id).not.toBe(first.alert.id);

      // Inside a transaction a duplicate must not abort it (it would on PostgreSQL with an error).
      await t.deps.db.transaction().execute(async (tx) => {
        const dup = await openAlert({ ...t.deps, db: tx }, projectId, 'high_error_rate', 'dup');
        expect(dup.opened).toBe(false);
        await tx.selectFrom('alerts').select('id').execute();
      });
    });

    it('lists newest first, filters by status, paginates with meta', async () => {
      const all = await list();
      expect(all.status).toBe(200);
      expect(all.body.meta).toEqual({ page: 1, limit: 10, total: 3, next: null });
      expect(all.body.data.map((a: { message: string }) => a.message)).toEqual([
        'failing again',
        'dpl_x failed',
        '12% of 200 requests failed',
      ]);
      expect(all.body.data[2]).toMatchObject({ status: 'resolved', resolvedAt: '2026-11-22T10:02:00.000Z' });
      const active = await list('?status=active', viewer);
      expect(active.body.data.map((a: { type: string }) => a.type)).toEqual([
        'high_error_rate',
        'deployment_failed',
      ]);
      expect(active.body.meta.total).toBe(2);
      const resolved = await list('?status=resolved');
      expect(resolved.body.data).toHaveLength(1);
      const page2 = await list('?limit=1&page=2');
      expect(page2.body.meta).toEqual({ page: 2, limit: 1, total: 3, next: expect.any(String) });
      expect(page2.body.data[0].message).toBe('dpl_x failed');
    });

    it('rejects bad queries, needs a token and hides other organizations’ projects', async () => {
      for (const q of ['?limit=0', '?limit=101', '?limit=2.5', '?page=0', '?status=open']) {
        const res = await list(q);
        expect(res.status, q).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      }
      expect((await list('', null)).status).toBe(401);
      const other = await list('', mallory);
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('NOT_FOUND');
    });
  });
});
