import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../../api/schemas/webhooks.ts';
import { newId } from '../../server/core/ids.ts';
import {
  markBuilding,
  markDeploying,
  markFailed,
  markLive,
} from '../../server/features/deployments/deployment-state.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from '../../server/features/webhooks/backoff.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../../server/features/webhooks/delivery-worker.ts';
import { DELIVERY_JOB } from '../../server/features/webhooks/delivery-job.ts';
import { recordEvent } from '../../server/features/webhooks/outbox.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { addMember } from '../helpers/members.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { readDeliveries } from '../helpers/deliveries.ts';
import { enqueueDelivery } from '../../server/features/webhooks/delivery-job.ts';

const SECRET = 'whsec-0123456789abcdef';
const COMMIT = '9fceb02d0ae598e95dc970b74767f19372d61af8';

describe('webhook delivery', () => {
  let t: TestApp;
  let clock: ManualClock;
  let alice: TestUser;
  let viewer: TestUser;
  let worker: DeliveryWorker;
  const stubs: StubServer[] = [];
  let names = 0;

  beforeAll(async () => {
    clock = new ManualClock();
    // The receivers listen on 127.0.0.1, which the SSRF rule refuses unless allowed.
    t = await createTestApp({ clock, env: { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
    // Polling so slow that only the commit-time wake-up can explain a prompt delivery.
    worker = startDeliveryWorker(t.deps, { pollMs: 60_000 });
  });
  afterEach(async () => {
    await worker.idle();
    await Promise.all(stubs.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  /** A receiver on 127.0.0.1 answering `status(index)`; 'hang' never answers. */
  async function receiver(status: (index: number) => number | 'hang' = () => 200) {
    const times: number[] = [];
    const stub = await startStub((_req, res, index) => {
      times.push(performance.now());
      const s = status(index);
      if (s === 'hang') return;
      res.writeHead(s, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    stubs.push(stub);
    return { ...stub, times };
  }

  /** A project with one webhook to `url` for `events`, registered through the API. */
  async function hooked(url: string, events: readonly WebhookEvent[] = ['deployment.created']) {
    const p = await t.call(alice, 'POST', '/v1/projects', {
      name: `hooked-${++names}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
      framework: 'static',
    });
    expect(p.status).toBe(201);
    const projectId = p.body.data.id as string;
    const w = await t.call(alice, 'POST', `/v1/projects/${projectId}/webhooks`, {
      url,
      events,
      secret: SECRET,
    });
    expect(w.status).toBe(201);
    return { projectId, webhookId: w.body.data.id as string };
  }

  const deploy = async (projectId: string, body: Record<string, unknown> = {}) => {
    const res = await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, body);
    expect(res.status).toBe(201);
    return res.body.data as { id: string; url: string; target: string; branch: string };
  };

  const deliveries = async (projectId: string, webhookId: string, user = alice) => {
    const res = await t.call(user, 'GET', `/v1/projects/${projectId}/webhooks/${webhookId}/deliveries`);
    expect(res.status).toBe(200);
    return res.body.data as any[];
  };

  const row = async (webhookId: string) => {
    const [first] = await readDeliveries(t.deps.db, { webhookId });
    if (!first) throw new Error(`no delivery for ${webhookId}`);
    return first;
  };

  /** Waits until the delivery's attempt number `n` is recorded. */
  const attempted = (webhookId: string, n: number) =>
    waitFor(`attempt ${n}`, async () => {
      const { id } = await row(webhookId);
      const count = await t.deps.db
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('delivery_id', '=', id)
        .executeTakeFirstOrThrow();
      // Read the row again after the count: on PostgreSQL the first read can predate the
      // transaction that recorded the attempt (the row is then still claimed, mid-attempt).
      return Number(count.n) >= n && (await row(webhookId));
    });

  /** Moves the clock to the delivery's next attempt and wakes the worker, as its poll would. */
  const nextAttemptDue = async (webhookId: string) => {
    const r = await row(webhookId);
    expect(r.next_attempt_at).not.toBeNull();
    clock.set(r.next_attempt_at!);
    t.deps.queue.notify(DELIVERY_JOB);
  };

  it('delivers every event kind signed, with the contract headers and payloads', async () => {
    const rx = await receiver();
    const { projectId, webhookId } = await hooked(`${rx.url}/hooks/slipway`, WEBHOOK_EVENTS);

    const prod = await deploy(projectId, { commitHash: COMMIT });
    await markBuilding(t.deps, prod.id, { commitHash: COMMIT });
    await markDeploying(t.deps, prod.id, { buildDurationMs: 1200, artifactId: 'art_1' });
    await markLive(t.deps, prod.id, { deployDurationMs: 300 });
    const broken = await deploy(projectId);
    await markFailed(t.deps, broken.id, 'Build failed: exit code 1');
    const preview = await deploy(projectId, { branch: 'feature-x' });
    await markBuilding(t.deps, preview.id);
    await markDeploying(t.deps, preview.id, { buildDurationMs: 900, artifactId: 'art_2' });
    await markLive(t.deps, preview.id, { deployDurationMs: 200 });
    expect((await t.call(alice, 'POST', `/v1/deployments/${preview.id}/promote`)).status).toBe(200);
    const domainId = newId('dom');
    for (const event of ['domain.verified', 'domain.ssl.issued'] as const) {
      const written = await t.deps.db.transaction().execute((tx) =>
        recordEvent(tx, t.deps, projectId, event, {
          domainId,
          projectId,
          domain: 'www.example.com',
          status: 'verified',
          sslStatus: event === 'domain.verified' ? 'pending' : 'active',
        }),
      );
      expect(written).toBe(1);
      t.deps.queue.notify(DELIVERY_JOB);
    }

    // created, building, deploying, success (prod); created, failed; created, building,
    // deploying, success, promoted (preview); two domain events.
    await waitFor('13 deliveries', () => rx.requests.length === 13);
    const stored = await readDeliveries(t.deps.db, { webhookId });
    expect(stored).toHaveLength(13);
    expect(new Set(rx.requests.map((r) => r.headers['x-slipway-event']))).toEqual(new Set(WEBHOOK_EVENTS));

    for (const req of rx.requests) {
      const id = req.headers['x-slipway-delivery'] as string;
      const delivery = stored.find((s) => s.id === id);
      expect(delivery, `delivery ${id}`).toBeDefined();
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/hooks/slipway');
      // The stored event (first attempt: stamped at creation), exactly what was signed.
      expect(req.body).toBe(delivery!.payload);
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['user-agent']).toBe('Slipway-Webhooks/1');
      expect(req.headers['x-slipway-event']).toBe(delivery!.event);
      const signature = req.headers['x-slipway-signature'] as string;
      expect(signature).toBe(`sha256=${createHmac('sha256', SECRET).update(req.body).digest('hex')}`);
      expect(await octokitVerify(SECRET, req.body, signature)).toBe(true);
      expect(await octokitVerify('some-other-secret-value', req.body, signature)).toBe(false);
      expect(JSON.parse(req.body).event).toBe(delivery!.event);
    }

    const bodies = rx.requests.map(
      (r) => JSON.parse(r.body) as { event: string; timestamp: string; data: any },
    );
    const find = (event: string, deploymentId?: string) =>
      bodies.find((b) => b.event === event && (!deploymentId || b.data.deploymentId === deploymentId));
    const prodData = {
      deploymentId: prod.id,
      projectId,
      url: prod.url,
      target: 'production',
      branch: 'main',
    };
    expect(find('deployment.created', prod.id)).toEqual({
      event: 'deployment.created',
      timestamp: clock.now().toISOString(),
      data: { ...prodData, status: 'queued', commitHash: COMMIT },
    });
    expect(find('deployment.building', prod.id)!.data).toEqual({
      ...prodData,
      status: 'building',
      commitHash: COMMIT,
    });
    expect(find('deployment.deploying', prod.id)!.data.status).toBe('deploying');
    expect(find('deployment.success', prod.id)!.data).toEqual({
      ...prodData,
      status: 'live',
      commitHash: COMMIT,
    });
    expect(find('deployment.failed', broken.id)!.data).toMatchObject({
      deploymentId: broken.id,
      status: 'failed',
      commitHash: null,
    });
    expect(find('deployment.success', preview.id)!.data).toMatchObject({
      target: 'preview',
      branch: 'feature-x',
    });
    expect(find('deployment.promoted', preview.id)!.data).toEqual({
      deploymentId: preview.id,
      projectId,
      url: preview.url,
      status: 'live',
      target: 'production',
      branch: 'feature-x',
      commitHash: null,
    });
    expect(find('domain.ssl.issued')!.data).toEqual({
      domainId,
      projectId,
      domain: 'www.example.com',
      status: 'verified',
      sslStatus: 'active',
    });

    // Every delivery succeeded on its first attempt, as any member can see.
    await worker.idle();
    const listed = await t.call(
      viewer,
      'GET',
      `/v1/projects/${projectId}/webhooks/${webhookId}/deliveries?limit=100`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.meta.total).toBe(13);
    for (const d of listed.body.data) {
      expect(d).toMatchObject({ status: 'success', nextAttemptAt: null });
      expect(d.attempts).toEqual([
        { at: clock.now().toISOString(), statusCode: 200, durationMs: expect.any(Number), error: null },
      ]);
    }
  });

  it('retries a 500 and delivers on the next attempt with the same delivery id', async () => {
    const rx = await receiver((i) => (i === 0 ? 500 : 204));
    const { projectId, webhookId } = await hooked(`${rx.url}/retry`);
    await deploy(projectId);

    const first = await attempted(webhookId, 1);
    expect(first).toMatchObject({ status: 'pending', attempt_count: 1 });
    const delay = Date.parse(first.next_attempt_at!) - clock.now().getTime();
    expect(delay).toBeGreaterThanOrEqual(9_000);
    expect(delay).toBeLessThanOrEqual(11_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.requests).toHaveLength(1);

    const firstAt = clock.now().toISOString();
    await nextAttemptDue(webhookId);
    await attempted(webhookId, 2);
    expect(rx.requests).toHaveLength(2);
    const [a, b] = rx.requests;
    expect(b!.headers['x-slipway-delivery']).toBe(a!.headers['x-slipway-delivery']);
    // The same event and data, stamped with the time of each attempt (receivers reject stale ones).
    const [bodyA, bodyB] = [JSON.parse(a!.body), JSON.parse(b!.body)];
    expect(bodyB.data).toEqual(bodyA.data);
    expect(bodyA.timestamp).toBe(firstAt);
    expect(bodyB.timestamp).toBe(clock.now().toISOString());
    expect(b!.headers['x-slipway-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET).update(b!.body).digest('hex')}`,
    );
    // Standard Webhooks beside it: the same id on every attempt, each attempt's own time, and a
    // signature over "<id>.<timestamp>.<body>" keyed with the secret's UTF-8 bytes.
    for (const [req, at] of [
      [a!, firstAt],
      [b!, clock.now().toISOString()],
    ] as const) {
      const id = req.headers['webhook-id'] as string;
      const timestamp = req.headers['webhook-timestamp'] as string;
      expect(id).toBe(a!.headers['x-slipway-delivery']);
      expect(timestamp).toBe(String(Math.floor(Date.parse(at) / 1000)));
      const mac = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${id}.${timestamp}.${req.body}`);
      expect(req.headers['webhook-signature']).toBe(`v1,${mac.digest('base64')}`);
    }

    const [d] = await deliveries(projectId, webhookId);
    expect(d).toMatchObject({ id: a!.headers['x-slipway-delivery'], status: 'success', nextAttemptAt: null });
    expect(d.attempts).toEqual([
      { at: firstAt, statusCode: 500, durationMs: expect.any(Number), error: null },
      { at: clock.now().toISOString(), statusCode: 204, durationMs: expect.any(Number), error: null },
    ]);
  });

  it('reaches a receiver that was down once it is up again', async () => {
    // A port that was just free: nothing listens there until the test starts the receiver.
    const probe = await startStub(() => undefined);
    const url = probe.url;
    await probe.close();
    const { projectId, webhookId } = await hooked(`${url}/late`);
    await deploy(projectId);

    const down = await attempted(webhookId, 1);
    expect(down.status).toBe('pending');
    const [pending] = await deliveries(projectId, webhookId);
    expect(pending.attempts[0]).toMatchObject({
      statusCode: null,
      error: expect.stringContaining('ECONNREFUSED'),
    });

    const received: string[] = [];
    const server: Server = createServer((req, res) => {
      received.push(String(req.headers['x-slipway-delivery']));
      res.end();
    });
    await new Promise<void>((r) => server.listen(Number(new URL(url).port), '127.0.0.1', r));
    try {
      expect((server.address() as AddressInfo).port).toBe(Number(new URL(url).port));
      await nextAttemptDue(webhookId);
      await attempted(webhookId, 2);
      expect(received).toEqual([down.id]);
      expect(await row(webhookId)).toMatchObject({ status: 'success', next_attempt_at: null });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('follows the retry schedule and fails the delivery after the last attempt', async () => {
    const rx = await receiver(() => 503);
    const { projectId, webhookId } = await hooked(`${rx.url}/down`);
    await deploy(projectId);

    for (let n = 1; n <= MAX_ATTEMPTS; n++) {
      const r = await attempted(webhookId, n);
      if (n === MAX_ATTEMPTS) break;
      const wait = Date.parse(r.next_attempt_at!) - clock.now().getTime();
      const base = RETRY_DELAYS_MS[n - 1]!;
      expect(wait, `delay after attempt ${n}`).toBeGreaterThanOrEqual(base * 0.9 - 1);
      expect(wait, `delay after attempt ${n}`).toBeLessThanOrEqual(base * 1.1 + 1);
      await nextAttemptDue(webhookId);
    }
    expect(await row(webhookId)).toMatchObject({
      status: 'failed',
      attempt_count: MAX_ATTEMPTS,
      next_attempt_at: null,
    });
    expect(rx.requests).toHaveLength(8);
    expect(new Set(rx.requests.map((r) => r.headers['x-slipway-delivery'])).size).toBe(1);
    const [d] = await deliveries(projectId, webhookId);
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual(Array(8).fill(503));

    // Nothing more is sent, however long one waits.
    clock.advance(7 * 24 * 3_600_000);
    t.deps.queue.notify(DELIVERY_JOB);
    await worker.idle();
    expect(rx.requests).toHaveLength(8);
  });

  it('410 Gone deactivates the webhook and fails the delivery without retries', async () => {
    const rx = await receiver(() => 410);
    const { projectId, webhookId } = await hooked(`${rx.url}/gone`);
    await deploy(projectId);

    const r = await attempted(webhookId, 1);
    expect(r).toMatchObject({ status: 'failed', next_attempt_at: null });
    const hooks = await t.call(alice, 'GET', `/v1/projects/${projectId}/webhooks`);
    expect(hooks.body.data).toEqual([expect.objectContaining({ id: webhookId, active: false })]);
    const [d] = await deliveries(projectId, webhookId);
    expect(d.attempts).toEqual([
      { at: expect.any(String), statusCode: 410, durationMs: expect.any(Number), error: null },
    ]);

    // A delivery written before the deactivation (here: directly) is dropped with the reason.
    const now = clock.now().toISOString();
    const queuedId = await enqueueDelivery(
      t.deps.db,
      t.deps.queue,
      webhookId,
      'deployment.created',
      r.payload,
    );
    t.deps.queue.notify(DELIVERY_JOB);
    await worker.idle();
    const after = await deliveries(projectId, webhookId);
    expect(after.find((x) => x.id === queuedId)).toMatchObject({
      status: 'failed',
      nextAttemptAt: null,
      attempts: [
        {
          at: now,
          statusCode: null,
          durationMs: 0,
          error: 'not sent: the webhook is inactive because its receiver answered 410 Gone',
        },
      ],
    });
    // New events are no longer recorded for it, and nothing more reached the receiver.
    await deploy(projectId);
    await worker.idle();
    expect((await deliveries(projectId, webhookId)).length).toBe(2);
    expect(rx.requests).toHaveLength(1);
  });

  it('sends nothing for a change whose transaction rolled back', async () => {
    const rx = await receiver();
    const { projectId, webhookId } = await hooked(`${rx.url}/rollback`);
    await expect(
      t.deps.db.transaction().execute(async (tx) => {
        const written = await recordEvent(tx, t.deps, projectId, 'deployment.created', { projectId });
        expect(written).toBe(1);
        throw new Error('the change failed after recording its event');
      }),
    ).rejects.toThrow('the change failed');
    t.deps.queue.notify(DELIVERY_JOB);
    await worker.idle();
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.requests).toEqual([]);
    expect(await readDeliveries(t.deps.db, { webhookId })).toEqual([]);
  });

  it('starts a delivery right after the commit when idle (well under the poll interval)', async () => {
    const rx = await receiver();
    const { projectId } = await hooked(`${rx.url}/fast`, ['deployment.building']);
    const { id } = await deploy(projectId);
    const latencies: number[] = [];
    await worker.idle();
    const started = performance.now();
    await markBuilding(t.deps, id);
    await waitFor('the delivery', () => rx.times.length === 1, 30_000);
    latencies.push(rx.times[0]! - started);
    // The target is 50 ms (the bench measures it); this bound only catches a worker that waits
    // for its 60 s poll, with room for a loaded machine.
    expect(latencies[0]).toBeLessThan(30_000);
  });

  it('times out an attempt that gets no answer and retries it', async () => {
    // This worker alone, so the attempt certainly runs with the short deadline.
    await worker.stop();
    const w = startDeliveryWorker(t.deps, { pollMs: 60_000, timeoutMs: 200 });
    const rx = await receiver(() => 'hang');
    const { projectId, webhookId } = await hooked(`${rx.url}/slow`);
    try {
      await deploy(projectId);
      const r = await attempted(webhookId, 1);
      expect(r.status).toBe('pending');
      const [d] = await deliveries(projectId, webhookId);
      expect(d.attempts[0]).toMatchObject({ statusCode: null, error: 'timed out after 0.2 s' });
      expect(d.attempts[0].durationMs).toBeGreaterThanOrEqual(150);
    } finally {
      await w.stop();
      worker = startDeliveryWorker(t.deps, { pollMs: 60_000 });
    }
  });

  it('drops a pending delivery whose webhook row is gone', async () => {
    const id = await enqueueDelivery(t.deps.db, t.deps.queue, newId('whk'), 'deployment.created', '{}');
    t.deps.queue.notify(DELIVERY_JOB);
    await worker.idle();
    const left = await t.deps.db.selectFrom('jobs').select('id').where('id', '=', id).execute();
    expect(left).toEqual([]);
  });

  it('spreads retry delays by at most 10 % and stops after seven retries', () => {
    expect(RETRY_DELAYS_MS).toEqual([10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000]);
    expect(retryDelayMs(1, () => 0)).toBe(9_000);
    expect(retryDelayMs(1, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(7, () => 1)).toBe(95_040_000);
    expect(retryDelayMs(8)).toBeNull();
  });
});
