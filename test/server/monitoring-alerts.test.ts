import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../server/platform/jobs/worker.ts';
import { evaluateDeploymentFailures } from '../../server/features/monitoring/deployment-failed-alert.ts';
import { errorRateBreached, evaluateErrorRates } from '../../server/features/monitoring/error-rate-alert.ts';
import { createMonitoringTickJob, MONITORING_TICK_JOB } from '../../server/schedule/monitoring-tick.ts';
import {
  ensureSlotJob,
  isStale,
  slotJobId,
  slotStart,
  startPeriodicScheduler,
} from '../../server/platform/jobs/periodic-jobs.ts';
import { probeProductionUrls } from '../../server/features/monitoring/probe-production.ts';
import { pruneMonitoringData } from '../../server/features/monitoring/prune.ts';
import { recordRequests, type ServedRequest } from '../../server/features/monitoring/record-requests.ts';
import { recordRuntimeSamples } from '../../server/features/monitoring/record-runtime-samples.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { FakeClock, ManualClock } from '../helpers/clock.ts';
import { insertDeployment, insertProject, listen, setProduction } from '../helpers/edge.ts';
import { addMember } from '../helpers/members.ts';
import { waitFor } from '../helpers/wait-for.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const MIN = 60_000;
const HOUR = 60 * MIN;

describe('the high_error_rate rule', () => {
  it('needs more than 5% of at least 20 requests answered 5xx', () => {
    expect(errorRateBreached({ requests: 19, serverErrors: 19 })).toBe(false);
    expect(errorRateBreached({ requests: 20, serverErrors: 1 })).toBe(false);
    expect(errorRateBreached({ requests: 20, serverErrors: 2 })).toBe(true);
    expect(errorRateBreached({ requests: 1000, serverErrors: 50 })).toBe(false);
    expect(errorRateBreached({ requests: 1000, serverErrors: 51 })).toBe(true);
    expect(errorRateBreached({ requests: 0, serverErrors: 0 })).toBe(false);
  });
});

describe('monitoring rules, probes and pruning', () => {
  const clock = new ManualClock(NOW);
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  /** The stand-in edge the probes reach: answers each host with the status set here. */
  const statusOf = new Map<string, number>();
  const seen: { host: string; agent: string }[] = [];
  let edge: Server;

  beforeAll(async () => {
    edge = createServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0]!;
      seen.push({ host, agent: req.headers['user-agent'] ?? '' });
      res.writeHead(statusOf.get(host) ?? 200);
      res.end('probe answer');
    });
    const port = await listen(edge);
    t = await createTestApp({ clock, env: { SLIPWAY_EDGE_INTERNAL_URL: `http://127.0.0.1:${port}` } });
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((r) => edge.close(() => r()));
  });
  afterEach(() => clock.set(NOW));

  const traffic = (projectId: string, n: number, status: number, at = clock.now()): ServedRequest[] =>
    Array.from({ length: n }, () => ({ projectId, at, status, durationMs: 5, bytes: 10 }));
  const activeAlerts = (projectId: string, type: string) =>
    t.deps.db
      .selectFrom('alerts')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('type', '=', type as never)
      .execute();

  describe('high_error_rate', () => {
    it('opens over the last 5 minutes of rollups, counting 5xx only, and resolves when the rate falls', async () => {
      const p = await insertProject(t, alice.orgId);
      // 40 requests, 3 of them 5xx (7.5%) and 10 of them 404 (not server errors).
      await recordRequests(t.deps, [
        ...traffic(p.id, 27, 200, new Date(Date.parse(NOW) - 2 * MIN)),
        ...traffic(p.id, 10, 404, new Date(Date.parse(NOW) - 2 * MIN)),
        ...traffic(p.id, 2, 500, new Date(Date.parse(NOW) - MIN)),
        ...traffic(p.id, 1, 503),
        // Six minutes ago: outside the window, however bad.
        ...traffic(p.id, 50, 500, new Date(Date.parse(NOW) - 6 * MIN)),
      ]);
      await evaluateErrorRates(t.deps);
      const [alert] = await activeAlerts(p.id, 'high_error_rate');
      expect(alert).toMatchObject({
        status: 'active',
        message: '7.5% of 40 requests answered 5xx over the last 5 minutes',
        created_at: NOW,
      });

      // Visible to a viewer through the API, hidden from another organization.
      const listed = await t.call(viewer, 'GET', `/v1/projects/${p.id}/alerts?status=active`);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([
        expect.objectContaining({ id: alert!.id, type: 'high_error_rate', status: 'active' }),
      ]);
      expect((await t.call(mallory, 'GET', `/v1/projects/${p.id}/alerts`)).status).toBe(404);
      expect((await t.call(null, 'GET', `/v1/projects/${p.id}/alerts`)).status).toBe(401);

      // A second evaluation keeps the one alert.
      await evaluateErrorRates(t.deps);
      expect(await activeAlerts(p.id, 'high_error_rate')).toHaveLength(1);

      // Three minutes on, 100 good requests dilute the errors to 3 of 140 (2.1%).
      clock.advance(3 * MIN);
      await recordRequests(t.deps, traffic(p.id, 100, 200));
      await evaluateErrorRates(t.deps);
      const [resolved] = await activeAlerts(p.id, 'high_error_rate');
      expect(resolved).toMatchObject({
        id: alert!.id,
        status: 'resolved',
        resolved_at: clock.now().toISOString(),
      });
    });

    it('resolves when traffic stops, and opens a new alert when errors come back', async () => {
      const p = await insertProject(t, alice.orgId);
      await recordRequests(t.deps, traffic(p.id, 20, 502));
      await evaluateErrorRates(t.deps);
      clock.advance(10 * MIN);
      await evaluateErrorRates(t.deps);
      clock.advance(MIN);
      await recordRequests(t.deps, traffic(p.id, 25, 500));
      await evaluateErrorRates(t.deps);
      const rows = await activeAlerts(p.id, 'high_error_rate');
      expect(rows.map((r) => r.status).sort()).toEqual(['active', 'resolved']);
    });
  });

  describe('deployment_failed', () => {
    it('opens when a production deployment fails after the live one and resolves when a later one goes live', async () => {
      const p = await insertProject(t, alice.orgId);
      const live = await insertDeployment(t, p.id, { ready_at: '2026-11-22T09:00:00.000Z' });
      await setProduction(t, p.id, live.id);
      // A failed preview does not count.
      await insertDeployment(t, p.id, {
        status: 'failed',
        target: 'preview',
        updated_at: '2026-11-22T09:30:00.000Z',
      });
      await evaluateDeploymentFailures(t.deps);
      expect(await activeAlerts(p.id, 'deployment_failed')).toEqual([]);

      const failed = await insertDeployment(t, p.id, {
        status: 'failed',
        error_message: 'The build command exited with code 1',
        updated_at: '2026-11-22T09:45:00.000Z',
      });
      await evaluateDeploymentFailures(t.deps);
      const [alert] = await activeAlerts(p.id, 'deployment_failed');
      expect(alert).toMatchObject({
        status: 'active',
        message: `Production deployment ${failed.id} failed: The build command exited with code 1`,
      });

      // A day later the failure is outside the look-back, but the open alert keeps being checked.
      clock.advance(25 * HOUR);
      await evaluateDeploymentFailures(t.deps);
      expect((await activeAlerts(p.id, 'deployment_failed'))[0]!.status).toBe('active');

      // A preview promoted to production after the failure resolves it (its ready_at is older).
      const promoted = await insertDeployment(t, p.id, {
        target: 'production',
        ready_at: '2026-11-22T09:40:00.000Z',
        promoted_at: clock.now().toISOString(),
      });
      await setProduction(t, p.id, promoted.id);
      await evaluateDeploymentFailures(t.deps);
      expect(await activeAlerts(p.id, 'deployment_failed')).toEqual([
        expect.objectContaining({
          id: alert!.id,
          status: 'resolved',
          resolved_at: clock.now().toISOString(),
        }),
      ]);
    });

    it('opens for a project whose first production deployment failed', async () => {
      const p = await insertProject(t, alice.orgId);
      await insertDeployment(t, p.id, { status: 'failed', updated_at: NOW });
      await evaluateDeploymentFailures(t.deps);
      expect((await activeAlerts(p.id, 'deployment_failed'))[0]).toMatchObject({ status: 'active' });
    });
  });

  describe('health probes', () => {
    const withProduction = async (values: Parameters<typeof insertProject>[2] = {}) => {
      const p = await insertProject(t, alice.orgId, values);
      const d = await insertDeployment(t, p.id);
      await setProduction(t, p.id, d.id);
      return p;
    };
    const checks = (projectId: string) =>
      t.deps.db
        .selectFrom('health_checks')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();

    it('probes the production host of active projects with production only, through the edge', async () => {
      // Projects of earlier tests are out of the picture once deleted.
      await t.deps.db.updateTable('projects').set({ deleted_at: NOW }).execute();
      const up = await withProduction({ name: 'probe-up' });
      const suspended = await withProduction({ name: 'probe-suspended', status: 'suspended' });
      const empty = await insertProject(t, alice.orgId, { name: 'probe-empty' });
      seen.length = 0;
      expect(await probeProductionUrls(t.deps)).toBe(1);
      expect(seen).toEqual([{ host: 'probe-up.localhost', agent: 'Slipway-HealthCheck/1' }]);
      const [row] = await checks(up.id);
      expect(row).toMatchObject({ at: NOW, ok: 1, status_code: 200, error: null });
      expect(row!.response_time_ms).toEqual(expect.any(Number));
      expect(await checks(suspended.id)).toEqual([]);
      expect(await checks(empty.id)).toEqual([]);
    });

    it('opens health_check_failed after three failures in a row, resolves on the first success', async () => {
      const p = await withProduction({ name: 'flaky' });
      statusOf.set('flaky.localhost', 502);
      for (let i = 0; i < 2; i++) {
        await probeProductionUrls(t.deps);
        clock.advance(MIN);
      }
      expect(await activeAlerts(p.id, 'health_check_failed')).toEqual([]);
      // A success in between starts the count again.
      statusOf.set('flaky.localhost', 301);
      await probeProductionUrls(t.deps);
      statusOf.set('flaky.localhost', 500);
      for (let i = 0; i < 3; i++) {
        clock.advance(MIN);
        await probeProductionUrls(t.deps);
      }
      const [alert] = await activeAlerts(p.id, 'health_check_failed');
      expect(alert).toMatchObject({
        status: 'active',
        message: 'The production URL failed 3 health checks in a row (last: answered 500)',
      });
      const health = await t.call(alice, 'GET', `/v1/projects/${p.id}/health`);
      expect(health.body.data).toMatchObject({
        status: 'down',
        uptime: 16.67,
        lastCheck: clock.now().toISOString(),
      });

      statusOf.delete('flaky.localhost');
      clock.advance(MIN);
      await probeProductionUrls(t.deps);
      expect((await activeAlerts(p.id, 'health_check_failed'))[0]).toMatchObject({ status: 'resolved' });
      expect((await t.call(alice, 'GET', `/v1/projects/${p.id}/health`)).body.data.status).toBe('degraded');
    });

    it('records a probe that gets no answer without a response time', async () => {
      const p = await withProduction({ name: 'unreachable' });
      // An edge nobody listens at (port 1 is never open to us).
      const deps = { ...t.deps, config: { ...t.deps.config, edgeInternalUrl: 'http://127.0.0.1:1' } };
      await probeProductionUrls(deps);
      const [row] = await checks(p.id);
      expect(row).toMatchObject({ ok: 0, status_code: null, response_time_ms: null });
      expect(row!.error).toMatch(/ECONNREFUSED/);
      expect((await t.call(alice, 'GET', `/v1/projects/${p.id}/health`)).body.data).toMatchObject({
        status: 'down',
        responseTime: null,
      });
    });
  });

  describe('pruning', () => {
    it('deletes probes past 48 hours and rollups and samples past their retention, keeping the rest', async () => {
      const p = await insertProject(t, alice.orgId);
      const ago = (ms: number) => new Date(Date.parse(NOW) - ms);
      for (const at of [ago(49 * HOUR), ago(47 * HOUR)]) {
        await t.deps.db
          .insertInto('health_checks')
          .values({
            project_id: p.id,
            at: at.toISOString(),
            ok: 1,
            status_code: 200,
            response_time_ms: 3,
            error: null,
          })
          .execute();
      }
      await recordRequests(t.deps, [
        ...traffic(p.id, 1, 200, ago(31 * 24 * HOUR)),
        ...traffic(p.id, 1, 200, ago(29 * 24 * HOUR)),
      ]);
      await recordRuntimeSamples(t.deps, [
        { projectId: p.id, deploymentId: 'dpl_x', at: ago(31 * 24 * HOUR), cpuPercent: 1, ramBytes: 1 },
        { projectId: p.id, deploymentId: 'dpl_x', at: ago(29 * 24 * HOUR), cpuPercent: 1, ramBytes: 1 },
      ]);
      const old = slotStart(ago(2 * 24 * HOUR), MIN);
      await t.deps.db
        .insertInto('jobs')
        .values({
          id: slotJobId(MONITORING_TICK_JOB, old),
          kind: MONITORING_TICK_JOB,
          payload: '{}',
          status: 'done',
          run_at: old.toISOString(),
          attempts: 1,
          max_attempts: 1,
          lease_until: null,
          locked_by: null,
          last_error: null,
          created_at: old.toISOString(),
          updated_at: old.toISOString(),
        })
        .execute();

      const pruned = await pruneMonitoringData(t.deps, [MONITORING_TICK_JOB]);
      expect(pruned).toMatchObject({ rollups: 2, runtimeSamples: 2, periodicRuns: 1 });
      expect(pruned.healthChecks).toBeGreaterThanOrEqual(1);
      const left = await t.deps.db
        .selectFrom('health_checks')
        .select('at')
        .where('project_id', '=', p.id)
        .execute();
      expect(left).toEqual([{ at: ago(47 * HOUR).toISOString() }]);
      const rollups = await t.deps.db
        .selectFrom('traffic_rollups')
        .select(['span', 'bucket_start'])
        .where('project_id', '=', p.id)
        .orderBy('span')
        .orderBy('bucket_start')
        .execute();
      // Minutes are kept 48 hours, hours 35 days, days 90 days (the defaults).
      const start = (d: Date, unit: number) => new Date(Math.floor(d.getTime() / unit) * unit).toISOString();
      expect(rollups).toEqual([
        { span: 'day', bucket_start: start(ago(31 * 24 * HOUR), 24 * HOUR) },
        { span: 'day', bucket_start: start(ago(29 * 24 * HOUR), 24 * HOUR) },
        { span: 'hour', bucket_start: start(ago(31 * 24 * HOUR), HOUR) },
        { span: 'hour', bucket_start: start(ago(29 * 24 * HOUR), HOUR) },
      ]);
    });
  });

  describe('scheduling', () => {
    it('makes one job per slot however many processes ask, and skips stale slots', async () => {
      const job = { kind: 'test.periodic', intervalMs: 5 * MIN };
      const results = await Promise.all([
        ensureSlotJob(t.deps, job),
        ensureSlotJob(t.deps, job),
        ensureSlotJob(t.deps, job),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      clock.advance(5 * MIN);
      expect(await ensureSlotJob(t.deps, job)).toBe(true);
      const rows = await t.deps.db
        .selectFrom('jobs')
        .select(['id', 'run_at', 'max_attempts'])
        .where('kind', '=', job.kind)
        .orderBy('run_at')
        .execute();
      expect(rows).toEqual([
        { id: `job_test.periodic_${NOW}`, run_at: NOW, max_attempts: 1 },
        {
          id: 'job_test.periodic_2026-11-22T10:05:00.000Z',
          run_at: '2026-11-22T10:05:00.000Z',
          max_attempts: 1,
        },
      ]);
      expect(isStale(JSON.stringify({ slot: NOW }), 5 * MIN, new Date(Date.parse(NOW) + 9 * MIN))).toBe(
        false,
      );
      expect(isStale(JSON.stringify({ slot: NOW }), 5 * MIN, new Date(Date.parse(NOW) + 11 * MIN))).toBe(
        true,
      );
    });
  });
});

describe('the monitoring tick in the worker', () => {
  it('runs once per interval across two schedulers and probes production', async () => {
    const edge = createServer((_req, res) => res.end('ok'));
    const port = await listen(edge);
    // The schedulers' timers run on this clock: each advance is one of their ticks (every 250 ms
    // for a 300 ms interval), so the slots that began are known exactly and nothing waits on time.
    const clock = new FakeClock(NOW);
    const t = await createTestApp({
      clock,
      env: { SLIPWAY_EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, SLIPWAY_HEALTH_INTERVAL: '300ms' },
    });
    try {
      const u = await t.user();
      const p = await insertProject(t, u.orgId, { name: 'ticked' });
      const d = await insertDeployment(t, p.id);
      await setProduction(t, p.id, d.id);
      const tick = createMonitoringTickJob(t.deps);
      // Two "processes": two schedulers and two workers on one database.
      const schedulers = [startPeriodicScheduler(t.deps, [tick]), startPeriodicScheduler(t.deps, [tick])];
      const workers = [
        startWorker(t.deps, [tick], { pollMs: 50 }),
        startWorker(t.deps, [tick], { pollMs: 50 }),
      ];
      const runsOf = () =>
        t.deps.db
          .selectFrom('jobs')
          .select(['id', 'status'])
          .where('kind', '=', MONITORING_TICK_JOB)
          .execute();
      const probesDone = async (n: number) =>
        (await t.deps.db.selectFrom('health_checks').select('id').execute()).length >= n;
      // Slots start at 0, 300 and 600 ms; ticks at 250 (slot 0 again), 500 (slot 1) and 750 (slot 2).
      await waitFor('the probe of the first slot', () => probesDone(1));
      for (const [ms, slots] of [
        [250, 1],
        [250, 2],
        [250, 3],
      ] as const) {
        clock.advance(ms);
        await waitFor(`${slots} slots' runs`, async () => (await runsOf()).length === slots);
      }
      await waitFor('three probe runs', () => probesDone(3));
      await Promise.all(schedulers.map((s) => s.stop()));
      await Promise.all(workers.map((w) => w.stop(2000)));
      const runs = await runsOf();
      const probes = await t.deps.db.selectFrom('health_checks').select(['project_id', 'ok']).execute();
      // One run per slot that began, never two runs of a slot, one probe per run.
      expect(runs.map((r) => r.id).sort()).toEqual(
        ['10:00:00.000', '10:00:00.300', '10:00:00.600'].map(
          (at) => `job_${MONITORING_TICK_JOB}_2026-11-22T${at}Z`,
        ),
      );
      expect(runs.every((r) => r.status === 'done')).toBe(true);
      expect(probes.length).toBe(3);
      expect(probes.every((c) => c.project_id === p.id && c.ok === 1)).toBe(true);
    } finally {
      await t.close();
      await new Promise<void>((r) => edge.close(() => r()));
    }
  });
});
