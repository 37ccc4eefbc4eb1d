import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_LEASE_MS, claimDeliveries } from '../../server/features/webhooks/delivery-claims.ts';
import { readDeliveries } from '../helpers/deliveries.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../../server/features/webhooks/delivery-worker.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const SECRET = 'whsec-0123456789abcdef';
const ENV = { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' };

describe('deliveries across worker stops and crashes, and the injected transport', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function app(clock: ManualClock, dataDir?: string) {
    const t = await createTestApp({ clock, env: ENV, ...(dataDir ? { dataDir } : {}) });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await t.close();
    };
    cleanup.push(close);
    return { t, close };
  }
  function worker(t: TestApp, opts: Parameters<typeof startDeliveryWorker>[1] = {}): DeliveryWorker {
    const w = startDeliveryWorker(t.deps, { pollMs: 20, ...opts });
    cleanup.push(() => w.stop(0));
    return w;
  }
  async function receiver(status: (index: number) => number | 'hang') {
    const stub: StubServer = await startStub((_req, res, index) => {
      const s = status(index);
      if (s === 'hang') return;
      res.writeHead(s);
      res.end();
    });
    cleanup.push(() => stub.close());
    return stub;
  }
  async function hooked(t: TestApp, user: TestUser, url: string) {
    const p = await t.call(user, 'POST', '/v1/projects', {
      name: 'durable',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: user.orgId,
      framework: 'static',
    });
    const projectId = p.body.data.id as string;
    const w = await t.call(user, 'POST', `/v1/projects/${projectId}/webhooks`, {
      url,
      events: ['deployment.created'],
      secret: SECRET,
    });
    expect(w.status).toBe(201);
    return { projectId, webhookId: w.body.data.id as string };
  }
  const deliveryOf = async (t: TestApp, webhookId: string) => {
    const [first] = await readDeliveries(t.deps.db, { webhookId });
    if (!first) throw new Error(`no delivery for ${webhookId}`);
    return first;
  };
  const attemptsOf = (t: TestApp, deliveryId: string) =>
    t.deps.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', '=', deliveryId)
      .orderBy('id')
      .execute();

  it('resumes the retry schedule after a restart on the same data', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'slipway-webhook-restart-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const rx = await receiver((i) => (i === 0 ? 500 : 200));

    const clock1 = new ManualClock();
    const first = await app(clock1, dataDir);
    const alice = await first.t.user('alice@example.com');
    const { projectId, webhookId } = await hooked(first.t, alice, `${rx.url}/hook`);
    const w1 = worker(first.t);
    expect((await first.t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {})).status).toBe(201);
    const pending = await waitFor('the first attempt', async () => {
      const d = await deliveryOf(first.t, webhookId);
      return d.attempt_count === 1 && d.next_attempt_at !== null && d.status === 'pending' && d;
    });
    await waitFor('its record', async () => (await attemptsOf(first.t, pending.id)).length === 1);
    await w1.stop();
    await first.close();

    // A new process on the same database, once the retry is due: it polls and finds it.
    const clock2 = new ManualClock(pending.next_attempt_at!);
    clock2.advance(1);
    const second = await app(clock2, dataDir);
    worker(second.t);
    await waitFor('the retry', () => rx.requests.length === 2);
    expect(rx.requests.map((r) => r.headers['x-slipway-delivery'])).toEqual([pending.id, pending.id]);
    await waitFor('success', async () => (await deliveryOf(second.t, webhookId)).status === 'success');
    expect((await attemptsOf(second.t, pending.id)).map((a) => a.status_code)).toEqual([500, 200]);
  });

  it('delivers a claim whose worker died once its lease runs out', async () => {
    const rx = await receiver(() => 200);
    const clock = new ManualClock();
    const { t } = await app(clock);
    const alice = await t.user('alice@example.com');
    const { projectId, webhookId } = await hooked(t, alice, `${rx.url}/hook`);
    expect((await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {})).status).toBe(201);

    // A worker claims the delivery and dies before sending it.
    const [claimed] = await claimDeliveries(t.deps.db, t.deps.queue, 'a-dying-worker', 10, 2);
    expect(claimed).toMatchObject({ webhookId, attempt: 1 });
    const w = worker(t);
    await w.idle();
    expect(rx.requests).toEqual([]);

    clock.advance(CLAIM_LEASE_MS + 1);
    await waitFor('the delivery', () => rx.requests.length === 1);
    await waitFor('success', async () => (await deliveryOf(t, webhookId)).status === 'success');
    // The lost claim counts, so a delivery that kills its workers cannot come back forever.
    expect(await deliveryOf(t, webhookId)).toMatchObject({ attempt_count: 2, next_attempt_at: null });
    expect(await attemptsOf(t, claimed!.id)).toHaveLength(1);
  });

  it('never hands one due delivery to two workers', async () => {
    const rx = await receiver(() => 200);
    const clock = new ManualClock();
    const { t } = await app(clock);
    const alice = await t.user('alice@example.com');
    const { projectId, webhookId } = await hooked(t, alice, `${rx.url}/hook`);
    for (let i = 0; i < 20; i++) {
      expect((await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {})).status).toBe(201);
    }
    const claims = await Promise.all(
      [1, 2, 3, 4].map((n) => claimDeliveries(t.deps.db, t.deps.queue, `worker-${n}`, 20, 20)),
    );
    const ids = claims.flat().map((c) => c.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    const rows = await readDeliveries(t.deps.db, { webhookId });
    expect(rows.map((r) => r.attempt_count)).toEqual(Array(20).fill(1));
  });

  it('gives an attempt in flight back on stop, unrecorded, for the next worker', async () => {
    let hang = true;
    const rx = await receiver(() => (hang ? 'hang' : 200));
    const clock = new ManualClock();
    const { t } = await app(clock);
    const alice = await t.user('alice@example.com');
    const { projectId, webhookId } = await hooked(t, alice, `${rx.url}/hook`);
    const w1 = worker(t);
    expect((await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {})).status).toBe(201);
    await waitFor('the first request', () => rx.requests.length === 1);

    await w1.stop(50);
    const released = await deliveryOf(t, webhookId);
    expect(released).toMatchObject({
      status: 'pending',
      attempt_count: 0,
      next_attempt_at: clock.now().toISOString(),
    });
    expect(await attemptsOf(t, released.id)).toEqual([]);

    hang = false;
    worker(t);
    await waitFor('success', async () => (await deliveryOf(t, webhookId)).status === 'success');
    expect(rx.requests.map((r) => r.headers['x-slipway-delivery'])).toEqual([released.id, released.id]);
  });
  it('sends through an injected fetch after the same checks, with the same headers and bytes', async () => {
    const clock = new ManualClock();
    const { t } = await app(clock);
    const alice = await t.user('alice@example.com');
    const calls: { url: string; init: RequestInit }[] = [];
    const fetchImpl = (async (url: URL, init: RequestInit) => {
      calls.push({ url: String(url), init });
      return new Response('accepted', { status: 202 });
    }) as unknown as typeof fetch;
    const { projectId, webhookId } = await hooked(t, alice, 'http://receiver.example.test/hook');
    worker(t, { fetchImpl, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect((await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {})).status).toBe(201);
    await waitFor('success', async () => (await deliveryOf(t, webhookId)).status === 'success');
    const d = await deliveryOf(t, webhookId);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('http://receiver.example.test/hook');
    expect(calls[0]!.init).toMatchObject({ method: 'POST', redirect: 'manual' });
    expect(Buffer.from(calls[0]!.init.body as Buffer).toString('utf8')).toBe(d.payload);
    expect(calls[0]!.init.headers).toMatchObject({
      'User-Agent': 'Slipway-Webhooks/1',
      'X-Slipway-Delivery': d.id,
      'X-Slipway-Event': 'deployment.created',
    });
    expect((await attemptsOf(t, d.id)).map((a) => a.status_code)).toEqual([202]);
  });
});
