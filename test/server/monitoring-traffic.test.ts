import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { requestWithHost } from '../../server/core/http-get.ts';
import { BUCKET_BOUNDS_MS, bucketIndex, OVERFLOW_REPORTED_AS_MS } from '../../server/core/histogram.ts';
import { runMonitoringTick } from '../../server/schedule/monitoring-tick.ts';
import { ManualClock } from '../helpers/clock.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** A server app with known answers: /ok, /fail (500), /slow?ms=, anything else 404; `/` is its health. */
const APP = `
import { createServer } from 'node:http';
let down = false;
createServer((req, res) => {
  const url = new URL(req.url, 'http://app');
  const send = (status, body) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(body);
  };
  if (url.pathname === '/') return send(down ? 503 : 200, down ? 'down' : 'up');
  if (url.pathname === '/toggle') { down = url.searchParams.get('down') === '1'; return send(200, String(down)); }
  if (url.pathname === '/ok') return send(200, 'ok: ' + 'x'.repeat(100));
  if (url.pathname === '/fail') return send(500, 'failed on purpose');
  if (url.pathname === '/slow') {
    const ms = Number(url.searchParams.get('ms'));
    return setTimeout(() => send(200, 'slow after ' + ms + ' ms'), ms);
  }
  send(404, 'no such page: ' + url.pathname);
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const START = '2026-11-22T10:00:00.000Z';
const LATER = '2026-11-22T12:00:00.000Z';
const MIN = 60_000;

/**
 * Real traffic through the real edge to a real server app, measured end to end: the edge
 * records, the rollups sum, the API answers. The clock is moved by hand so that the window
 * holds exactly the traffic the test sends (the build's own requests are two hours earlier).
 */
describe('monitoring from real traffic', () => {
  const clock = new ManualClock(START);
  let s: Stack;
  let repo: GitRepo;
  let token: string;
  let projectId: string;
  let prodHost: string;

  const api = () => s.client(token);
  const get = async (path: string) => {
    const started = performance.now();
    const res = await requestWithHost({ origin: s.edgeUrl, host: prodHost, path });
    const body = Buffer.from(await res.arrayBuffer());
    return { status: res.status, bytes: body.length, ms: performance.now() - started };
  };
  const deployed = async (): Promise<Deployment> => {
    const created = await api().deployments.create(projectId);
    return waitFor(
      `deployment ${created.id} to finish`,
      async () => {
        const d = await api().deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      30_000,
    );
  };
  const alerts = async (type: string) =>
    (await api().monitoring.alerts(projectId, { limit: 100 })).data.filter((a) => a.type === type);

  beforeAll(async () => {
    s = await startStack({
      clock,
      // One probe run at start-up (no project yet) and none after: the test runs them itself.
      env: { SLIPWAY_HEALTH_INTERVAL: '24h', SLIPWAY_RUNTIME_SAMPLE_INTERVAL: '150ms' },
    });
    const user = await s.user('traffic@example.com');
    token = user.token;
    repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({ name: 'app', private: true, scripts: { start: 'node server.mjs' } }),
        'server.mjs': APP,
      },
    });
    const project = await api().projects.create({
      name: 'traffic',
      repositoryUrl: repo.url,
      organizationId: user.orgId,
    });
    projectId = project.id;
    const first = await deployed();
    expect(first.status).toBe('live');
    prodHost = new URL((await api().projects.get(projectId)).deploymentUrl!).host;
    clock.set(LATER);
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  it('counts a known mix of statuses and delays exactly, with percentiles within one bucket', async () => {
    const plan = [
      ...Array.from({ length: 40 }, () => '/ok'),
      ...Array.from({ length: 20 }, () => '/fail'),
      ...Array.from({ length: 20 }, () => '/slow?ms=210'),
      ...Array.from({ length: 20 }, (_, i) => `/missing-${i}`),
    ];
    const answers: Awaited<ReturnType<typeof get>>[] = [];
    // Ten at a time, like a few visitors at once.
    for (let i = 0; i < plan.length; i += 10) {
      answers.push(...(await Promise.all(plan.slice(i, i + 10).map(get))));
    }
    expect(answers.filter((a) => a.status === 200)).toHaveLength(60);
    expect(answers.filter((a) => a.status === 500)).toHaveLength(20);
    expect(answers.filter((a) => a.status === 404)).toHaveLength(20);
    const bytes = answers.reduce((sum, a) => sum + a.bytes, 0);
    const clientAvg = answers.reduce((sum, a) => sum + a.ms, 0) / answers.length;

    const m = await waitFor('the edge to record 100 requests', async () => {
      const metrics = await api().monitoring.metrics(projectId, { period: '1h' });
      return metrics.metrics.requests?.total === 100 ? metrics.metrics : null;
    });
    expect(m.requests).toEqual({ total: 100, success: 60, errors: 40 });
    expect(m.errors).toEqual({ total: 40, rate: 40, byStatus: { '404': 20, '500': 20 } });
    expect(m.bandwidth).toEqual({ total: bytes, unit: 'bytes' });
    // The edge times each request at no more than the client saw and, for the 20 slow answers
    // (ranks 81 to 100), at no less than their 210 ms delay. So the edge's nth-ranked latency
    // lies between 210 ms and the client's nth-ranked one, and each percentile is the upper
    // bound of a bucket in that range: (200, 300] on a quiet machine, higher under load.
    const clientRanked = answers.map((a) => a.ms).sort((a, b) => a - b);
    const bound = (ms: number) => BUCKET_BOUNDS_MS[bucketIndex(ms)] ?? OVERFLOW_REPORTED_AS_MS;
    for (const [p, rank] of [
      ['p95', 95],
      ['p99', 99],
    ] as const) {
      expect(m.latency![p]).toBeGreaterThanOrEqual(300);
      expect(m.latency![p]).toBeLessThanOrEqual(bound(clientRanked[rank - 1]!));
    }
    // The median is one of the fast answers, below the slow ones' delay.
    expect(m.latency!.p50).toBeLessThanOrEqual(bound(clientRanked[49]!));
    expect(m.latency!.p50).toBeLessThan(300);
    // The edge measures less than the client (no connection set-up), but never less than the delays.
    expect(m.latency!.avg).toBeGreaterThanOrEqual((20 * 210) / 100);
    expect(m.latency!.avg).toBeLessThanOrEqual(clientAvg);
  });

  it('samples the server process: cpu and ram appear for the period', async () => {
    const m = await waitFor('cpu and ram samples', async () => {
      const metrics = await api().monitoring.metrics(projectId, { period: '1h' });
      return metrics.metrics.cpu && metrics.metrics.ram ? metrics.metrics : null;
    });
    expect(m.ram!.unit).toBe('bytes');
    // A running node process holds several MiB; far from all of the machine's memory.
    expect(m.ram!.avg).toBeGreaterThan(5 * 1024 * 1024);
    expect(m.ram!.max).toBeGreaterThanOrEqual(m.ram!.avg);
    expect(m.ram!.max).toBeLessThan(4 * 1024 ** 3);
    expect(m.cpu!.avg).toBeGreaterThanOrEqual(0);
    expect(m.cpu!.max).toBeGreaterThanOrEqual(m.cpu!.avg);
    const only = await api().monitoring.metrics(projectId, { period: '1h', metric: 'ram' });
    expect(Object.keys(only.metrics)).toEqual(['ram']);
  });

  it('an error burst opens high_error_rate; recovery resolves it', async () => {
    await runMonitoringTick(s.running.deps);
    const [open] = await alerts('high_error_rate');
    expect(open).toMatchObject({
      status: 'active',
      message: '20% of 100 requests answered 5xx over the last 5 minutes',
      createdAt: LATER,
      resolvedAt: null,
    });
    // Still failing a minute later: the same alert stays open, no second one.
    clock.advance(MIN);
    await runMonitoringTick(s.running.deps);
    expect(await alerts('high_error_rate')).toHaveLength(1);

    // Six minutes on, the window holds only healthy traffic.
    clock.advance(5 * MIN);
    for (let i = 0; i < 30; i++) expect((await get('/ok')).status).toBe(200);
    await waitFor('the healthy traffic to be recorded', async () => {
      const m = await api().monitoring.metrics(projectId, { period: '1h' });
      // 100 + 30: the probes of the runs above are not traffic.
      return m.metrics.requests?.total === 130;
    });
    await runMonitoringTick(s.running.deps);
    const [resolved] = await alerts('high_error_rate');
    expect(resolved).toMatchObject({
      id: open!.id,
      status: 'resolved',
      resolvedAt: clock.now().toISOString(),
    });
  });

  it('probes the production URL: three failures open health_check_failed, recovery resolves it', async () => {
    const before = await api().monitoring.health(projectId);
    expect(before).toMatchObject({ status: 'healthy', uptime: 100 });
    expect((await get('/toggle?down=1')).status).toBe(200);

    for (let i = 1; i <= 3; i++) {
      clock.advance(MIN);
      await runMonitoringTick(s.running.deps);
      const health = await api().monitoring.health(projectId);
      // The app answered (503), so the probe has a response time.
      expect(health).toMatchObject({ status: 'down', lastCheck: clock.now().toISOString() });
      expect(health.responseTime).toEqual(expect.any(Number));
      // Only the third failure in a row opens the alert.
      expect(await alerts('health_check_failed')).toHaveLength(i < 3 ? 0 : 1);
    }
    const [open] = await alerts('health_check_failed');
    expect(open).toMatchObject({ status: 'active' });
    expect(open!.message).toMatch(/failed 3 health checks in a row \(last: answered 503\)/);
    // 3 probes passed (the runs of the error-rate test), 3 failed.
    expect((await api().monitoring.health(projectId)).uptime).toBe(50);

    expect((await get('/toggle?down=0')).status).toBe(200);
    clock.advance(MIN);
    await runMonitoringTick(s.running.deps);
    const health = await api().monitoring.health(projectId);
    expect(health.status).toBe('degraded');
    expect(health.responseTime).toEqual(expect.any(Number));
    const [resolved] = await alerts('health_check_failed');
    expect(resolved).toMatchObject({
      id: open!.id,
      status: 'resolved',
      resolvedAt: clock.now().toISOString(),
    });

    // Fifteen minutes after the last failure, it is healthy again.
    clock.advance(16 * MIN);
    await runMonitoringTick(s.running.deps);
    expect((await api().monitoring.health(projectId)).status).toBe('healthy');
  });

  it('a failed production deployment opens deployment_failed; the next live one resolves it', async () => {
    repo.commit(
      {
        'package.json': JSON.stringify({
          name: 'app',
          private: true,
          scripts: { build: 'node -e "process.exit(4)"', start: 'node server.mjs' },
        }),
      },
      'Break the build',
    );
    clock.advance(MIN);
    const failed = await deployed();
    expect(failed.status).toBe('failed');
    await runMonitoringTick(s.running.deps);
    const [open] = await alerts('deployment_failed');
    expect(open).toMatchObject({ status: 'active' });
    expect(open!.message).toContain(`Production deployment ${failed.id} failed`);

    repo.git('revert', '--no-edit', 'HEAD');
    clock.advance(MIN);
    const fixed = await deployed();
    expect(fixed.status).toBe('live');
    await runMonitoringTick(s.running.deps);
    const [resolved] = await alerts('deployment_failed');
    expect(resolved).toMatchObject({ id: open!.id, status: 'resolved' });
  });
});
