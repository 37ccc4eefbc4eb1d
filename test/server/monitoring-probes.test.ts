import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeDeployment } from '../../server/features/monitoring/probe-deployment.ts';
import { createHostResolver } from '../../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer } from '../../server/features/serving/edge/server.ts';
import { probeProductionUrls } from '../../server/features/monitoring/probe-production.ts';
import { PRUNE_BATCH, pruneMonitoringData } from '../../server/features/monitoring/prune.ts';
import { PROBE_HEADER } from '../../server/core/edge-headers.ts';
import {
  createProbeCheck,
  isProbeToken,
  probeToken,
  probeTokens,
} from '../../server/features/monitoring/probe-token.ts';
import {
  createRequestRecorder,
  type RequestRecorder,
} from '../../server/features/monitoring/request-recorder.ts';
import { edgeRecordingOptions } from '../../server/roles/edge.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import {
  edgeRequest,
  insertDeployment,
  insertProject,
  listen,
  setProduction,
  storeSite,
} from '../helpers/edge.ts';

const NOW = '2026-11-22T10:00:30.000Z';
const MIN = 60_000;

const close = (s: Server) => new Promise<void>((r) => s.close(() => r()));

describe('health probes and traffic', () => {
  const clock = new ManualClock(NOW);
  let t: TestApp;
  let alice: TestUser;
  let recorder: RequestRecorder;
  let edge: Server;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    recorder = createRequestRecorder(t.deps, { intervalMs: 60_000 });
    // The real edge, wired as the edge role wires it.
    edge = createEdgeServer({
      resolver: createHostResolver(t.deps, { ttlMs: 0 }),
      artifactsRoot: t.deps.config.artifactsDir,
      onRequest: (r) => recorder.record(r),
      ...edgeRecordingOptions(t.deps),
    });
    port = await listen(edge);
  });
  afterAll(async () => {
    await recorder.close();
    await close(edge);
    await t.close();
  });
  afterEach(() => clock.set(NOW));

  const deps = () => ({
    ...t.deps,
    config: { ...t.deps.config, edgeInternalUrl: `http://127.0.0.1:${port}` },
  });
  const requestsOf = async (projectId: string) => {
    await recorder.flush();
    const rows = await t.deps.db
      .selectFrom('traffic_rollups')
      .select('requests')
      .where('project_id', '=', projectId)
      .where('span', '=', 'minute')
      .execute();
    return rows.reduce((n, r) => n + Number(r.requests), 0);
  };
  const checks = (projectId: string) =>
    t.deps.db.selectFrom('health_checks').selectAll().where('project_id', '=', projectId).execute();

  it('does not count probes as traffic; a visitor, or a forged probe header, is counted', async () => {
    const artifactId = await storeSite(t.deps.config.artifactsDir, { 'index.html': '<h1>up</h1>' });
    const p = await insertProject(t, alice.orgId, { name: 'quiet' });
    const d = await insertDeployment(t, p.id, { artifact_id: artifactId });
    await setProduction(t, p.id, d.id);

    expect(await probeProductionUrls(deps())).toBe(1);
    clock.advance(MIN);
    expect(await probeProductionUrls(deps())).toBe(1);
    const probes = await checks(p.id);
    expect(probes.map((c) => [c.ok, c.status_code])).toEqual([
      [1, 200],
      [1, 200],
    ]);
    expect(await requestsOf(p.id)).toBe(0);

    expect((await edgeRequest(port, 'quiet.localhost', '/')).status).toBe(200);
    const forged = await edgeRequest(port, 'quiet.localhost', '/', {
      headers: { [PROBE_HEADER]: 'v1.not.a.token' },
    });
    expect(forged.status).toBe(200);
    expect(await requestsOf(p.id)).toBe(2);
    // What GET /health says comes from the probes alone.
    const health = await t.call(alice, 'GET', `/v1/projects/${p.id}/health`);
    expect(health.body.data).toMatchObject({
      status: 'healthy',
      uptime: 100,
      lastCheck: clock.now().toISOString(),
    });
  });

  it('does not count the probe that makes a deployment live either', async () => {
    const artifactId = await storeSite(t.deps.config.artifactsDir, { 'index.html': '<h1>new</h1>' });
    const p = await insertProject(t, alice.orgId, { name: 'going-live' });
    const d = await insertDeployment(t, p.id, { artifact_id: artifactId });
    const probed = await probeDeployment({
      edgeUrl: `http://127.0.0.1:${port}`,
      host: `${d.host}.localhost`,
      deploymentId: d.id,
      timeoutMs: 10_000,
      probeToken: () => probeToken(t.deps),
    });
    expect(probed.status).toBe(200);
    expect(await requestsOf(p.id)).toBe(0);
    expect((await edgeRequest(port, `${d.host}.localhost`, '/')).status).toBe(200);
    expect(await requestsOf(p.id)).toBe(1);
  });

  it('accepts only a token sealed with this key, stamped within 5 minutes', async () => {
    const token = probeToken(t.deps);
    expect(isProbeToken(t.deps, token)).toBe(true);
    expect(isProbeToken(t.deps, t.deps.cipher.encrypt('something else'))).toBe(false);
    expect(isProbeToken(t.deps, 'garbage')).toBe(false);
    expect(isProbeToken(t.deps, undefined)).toBe(false);
    clock.advance(6 * MIN);
    expect(isProbeToken(t.deps, token)).toBe(false);
  });

  it("reuses a run's token for a minute; the edge's check remembers it and still ages it out", async () => {
    const tokens = probeTokens(t.deps);
    const check = createProbeCheck(t.deps);
    const first = tokens();
    clock.advance(MIN - 1);
    expect(tokens()).toBe(first);
    clock.advance(1);
    const second = tokens();
    expect(second).not.toBe(first);
    expect(isProbeToken(t.deps, second)).toBe(true);

    expect(check(first)).toBe(true);
    expect(check(first)).toBe(true);
    expect(check('v1.not.a.token')).toBe(false);
    expect(check(t.deps.cipher.encrypt('something else'))).toBe(false);
    expect(check(undefined)).toBe(false);
    // Remembered, yet not accepted once it is stamped more than 5 minutes from now.
    clock.advance(5 * MIN);
    expect(check(first)).toBe(false);
    expect(check(second)).toBe(true);
  });
});

describe('which projects a run probes', () => {
  const clock = new ManualClock(NOW);
  let t: TestApp;
  let alice: TestUser;
  const statusOf = new Map<string, number>();
  const seen: string[] = [];
  let edge: Server;

  beforeAll(async () => {
    // A stand-in edge: answers each host with the status set here.
    edge = createServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0]!;
      seen.push(host);
      res.writeHead(statusOf.get(host) ?? 200);
      res.end('probe answer');
    });
    const port = await listen(edge);
    t = await createTestApp({ clock, env: { SLIPWAY_EDGE_INTERNAL_URL: `http://127.0.0.1:${port}` } });
    alice = await t.user('alice@example.com');
  });
  afterAll(async () => {
    await t.close();
    await close(edge);
  });
  afterEach(async () => {
    clock.set(NOW);
    statusOf.clear();
    seen.length = 0;
    await t.deps.db.updateTable('projects').set({ deleted_at: NOW }).execute();
  });

  const withProduction = async (name: string) => {
    const p = await insertProject(t, alice.orgId, { name });
    const d = await insertDeployment(t, p.id);
    await setProduction(t, p.id, d.id);
    return p;
  };
  const alertsOf = (projectId: string) =>
    t.deps.db
      .selectFrom('alerts')
      .select(['status', 'message'])
      .where('project_id', '=', projectId)
      .where('type', '=', 'health_check_failed')
      .execute();

  it('skips a project with no live production: building, failed, or never deployed', async () => {
    const live = await withProduction('has-live');
    const building = await insertProject(t, alice.orgId, { name: 'first-build' });
    await insertDeployment(t, building.id, { status: 'building' });
    const failed = await insertProject(t, alice.orgId, { name: 'first-failed' });
    await insertDeployment(t, failed.id, { status: 'failed' });
    await insertProject(t, alice.orgId, { name: 'never-deployed' });

    expect(await probeProductionUrls(t.deps)).toBe(1);
    expect(seen).toEqual(['has-live.localhost']);
    const rows = await t.deps.db
      .selectFrom('health_checks')
      .select('project_id')
      .where('at', '=', NOW)
      .execute();
    expect(rows.map((r) => r.project_id)).toEqual([live.id]);
    const health = await t.call(alice, 'GET', `/v1/projects/${building.id}/health`);
    expect(health.body.data).toEqual({
      status: 'unknown',
      uptime: null,
      lastCheck: null,
      responseTime: null,
    });
  });

  it('raises the alert on the third failure in a row and clears it on the next success, among many projects', async () => {
    const projects = await Promise.all(['ok-1', 'ok-2', 'ok-3', 'sick'].map(withProduction));
    const sick = projects[3]!;
    statusOf.set('sick.localhost', 502);
    for (let run = 1; run <= 4; run++) {
      expect(await probeProductionUrls(t.deps)).toBe(4);
      const alerts = await alertsOf(sick.id);
      // Opened by the third run, and still one alert after a fourth failure.
      expect(alerts.map((a) => a.status)).toEqual(run < 3 ? [] : ['active']);
      clock.advance(MIN);
    }
    expect((await alertsOf(sick.id))[0]!.message).toBe(
      'The production URL failed 3 health checks in a row (last: answered 502)',
    );
    for (const p of projects.slice(0, 3)) expect(await alertsOf(p.id)).toEqual([]);

    statusOf.delete('sick.localhost');
    await probeProductionUrls(t.deps);
    expect((await alertsOf(sick.id)).map((a) => a.status)).toEqual(['resolved']);
    const health = await t.call(alice, 'GET', `/v1/projects/${sick.id}/health`);
    expect(health.body.data).toMatchObject({ status: 'degraded', uptime: 20 });
  });

  it('past SLIPWAY_PROBE_BATCH, probes a slice per interval and every project once per round', async () => {
    const projects = await Promise.all(Array.from({ length: 7 }, (_, i) => withProduction(`sliced-${i}`)));
    const d = { ...t.deps, config: { ...t.deps.config, probeBatch: 3 } };
    // 7 projects in batches of 3: 3 slices, one per interval.
    const counts: number[] = [];
    for (let run = 0; run < 3; run++) {
      counts.push(await probeProductionUrls(d));
      clock.advance(t.deps.config.healthIntervalMs);
    }
    expect([...counts].sort()).toEqual([2, 2, 3]);
    expect([...seen].sort()).toEqual(projects.map((p) => `${p.name}.localhost`).sort());
  });
});

describe('pruning in batches', () => {
  it('deletes a backlog larger than a batch, rows sharing a time included, and keeps the rest', async () => {
    const t = await createTestApp({ clock: new ManualClock(NOW) });
    try {
      const alice = await t.user('alice@example.com');
      const p = await insertProject(t, alice.orgId);
      const at = (hoursAgo: number) => new Date(Date.parse(NOW) - hoursAgo * 3_600_000).toISOString();
      // 2.5 batches of old probes, many sharing one time (the batch edge falls among them), and 3 recent.
      const old = Array.from({ length: Math.round(PRUNE_BATCH * 2.5) }, (_, i) => at(49 + (i % 7)));
      const rows = [...old, at(1), at(2), at(47)].map((time) => ({
        project_id: p.id,
        at: time,
        ok: 1,
        status_code: 200,
        response_time_ms: 3,
        error: null,
      }));
      for (let i = 0; i < rows.length; i += 500) {
        await t.deps.db
          .insertInto('health_checks')
          .values(rows.slice(i, i + 500))
          .execute();
      }
      const pruned = await pruneMonitoringData(t.deps);
      expect(pruned.healthChecks).toBe(old.length);
      const left = await t.deps.db.selectFrom('health_checks').select('at').orderBy('at').execute();
      expect(left.map((r) => r.at)).toEqual([at(47), at(2), at(1)]);
    } finally {
      await t.close();
    }
  });
});
