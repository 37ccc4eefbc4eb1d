import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../api/schemas/webhooks.ts';
import { newId } from '../../server/core/ids.ts';
import { markBuilding } from '../../server/features/deployments/deployment-state.ts';
import { DELIVERY_JOB, enqueueDelivery } from '../../server/features/webhooks/delivery-job.ts';
import { claimDeliveries } from '../../server/features/webhooks/delivery-claims.ts';
import { recordAttempt } from '../../server/features/webhooks/record-attempt.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../../server/features/webhooks/delivery-worker.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { readDeliveries } from '../helpers/deliveries.ts';

const SECRET = 'whsec-0123456789abcdef';

/**
 * Receivers that never answer must not delay anyone else's deliveries (issue: 16 hanging
 * endpoints held all eight slots and a healthy receiver got its event 20 s late).
 */
describe('fair webhook delivery', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  const stubs: StubServer[] = [];
  const workers: DeliveryWorker[] = [];
  let names = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    alice = await t.user('alice@example.com');
    bob = await t.user('bob@example.com');
    for (const u of [alice, bob]) {
      await t.deps.db
        .updateTable('organizations')
        .set({ plan: 'enterprise' })
        .where('id', '=', u.orgId)
        .execute();
    }
  });
  afterEach(async () => {
    // Abort the attempts still hanging, then close their sockets.
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
    await Promise.all(stubs.splice(0).map((s) => s.close()));
    await t.deps.db.deleteFrom('webhook_attempts').execute();
    await t.deps.db.deleteFrom('jobs').where('kind', '=', DELIVERY_JOB).execute();
  });
  afterAll(() => t.close());

  const worker = (opts: Parameters<typeof startDeliveryWorker>[1] = {}) => {
    // Polling so slow that only wake-ups explain prompt deliveries.
    const w = startDeliveryWorker(t.deps, { pollMs: 60_000, ...opts });
    workers.push(w);
    return w;
  };

  async function receiver(hang: boolean) {
    const times: number[] = [];
    let ended = 0;
    const stub = await startStub((_req, res) => {
      times.push(performance.now());
      res.on('close', () => ended++);
      if (hang) return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    stubs.push(stub);
    return { ...stub, times, ended: () => ended };
  }

  async function hooked(user: TestUser, url: string, events: readonly WebhookEvent[]) {
    const p = await t.call(user, 'POST', '/v1/projects', {
      name: `fair-${++names}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: user.orgId,
      framework: 'static',
    });
    expect(p.status).toBe(201);
    const projectId = p.body.data.id as string;
    const w = await t.call(user, 'POST', `/v1/projects/${projectId}/webhooks`, {
      url,
      events,
      secret: SECRET,
    });
    expect(w.status).toBe(201);
    return { projectId, webhookId: w.body.data.id as string };
  }

  const deploy = async (user: TestUser, projectId: string) => {
    const res = await t.call(user, 'POST', `/v1/projects/${projectId}/deployments`, {});
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };

  /** Latencies from an event's commit to its arrival at a healthy receiver, one event at a time. */
  async function healthyLatencies(count: number): Promise<number[]> {
    const rx = await receiver(false);
    const { projectId } = await hooked(bob, `${rx.url}/healthy`, ['deployment.building']);
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const id = await deploy(bob, projectId);
      const started = performance.now();
      await markBuilding(t.deps, id);
      await waitFor(`healthy delivery ${i + 1}`, () => rx.times.length === i + 1, 30_000);
      latencies.push(rx.times[i]! - started);
    }
    return latencies;
  }

  it('delivers to a healthy receiver while 16 others hang, without waiting for any of their attempts to end', async () => {
    const hanging = await receiver(true);
    for (let i = 0; i < 16; i++) {
      const { projectId } = await hooked(alice, `${hanging.url}/hang-${i}`, ['deployment.created']);
      for (let k = 0; k < 3; k++) await deploy(alice, projectId);
    }
    // The hanging attempts stay open for the whole test: a healthy delivery that needed one of
    // their slots back could only arrive after one of them ended.
    worker({ timeoutMs: 120_000 });
    // Every hanging endpoint holds as many attempts as it may (two each), none answered.
    await waitFor('the hanging attempts', () => hanging.times.length === 32, 30_000);

    const latencies = await healthyLatencies(20);
    // Causal, not timed: all 20 arrived while every one of the 32 attempts was still open.
    expect(latencies).toHaveLength(20);
    expect(hanging.ended()).toBe(0);
    // The hanging receivers were not given more than two attempts each meanwhile.
    expect(hanging.times).toHaveLength(32);
  });

  it('holds at most two attempts per endpoint, and finds other endpoints past its backlog', async () => {
    const hanging = await receiver(true);
    const { projectId, webhookId } = await hooked(alice, `${hanging.url}/backlog`, ['deployment.created']);
    for (let k = 0; k < 6; k++) await deploy(alice, projectId);
    worker({ concurrency: 4, timeoutMs: 120_000 });
    await waitFor('two hanging attempts', () => hanging.times.length === 2, 30_000);
    // A later event to another endpoint is claimed past the four older due ones...
    expect(await healthyLatencies(1)).toHaveLength(1);
    // ...while both hanging attempts were still open (it did not wait for one to end)...
    expect(hanging.ended()).toBe(0);
    // ...and that claim round took no more of the backlog.
    expect(hanging.times).toHaveLength(2);
    const claimed = await readDeliveries(t.deps.db, { webhookId });
    expect(claimed.map((r) => r.attempt_count).sort()).toEqual([0, 0, 0, 0, 1, 1]);
  });

  /** A delivery to `hook` due at `at` (ms), as recordEvent stores one. */
  const dueAt = (hook: string, at: number) =>
    t.deps.queue.enqueue(
      t.deps.db,
      DELIVERY_JOB,
      { event: 'deployment.created', body: '{}' },
      { id: newId('whd'), fairKey: hook, subject: hook, runAt: new Date(at), maxAttempts: 8 },
    );
  const claim = (limit: number, perEndpoint: number) =>
    claimDeliveries(t.deps.db, t.deps.queue, 'one-worker', limit, perEndpoint);

  it('claims the oldest due deliveries of each endpoint within its allowance', async () => {
    const now = t.deps.clock.now().getTime();
    const a = newId('whk');
    const b = newId('whk');
    const ids: string[] = [];
    for (const i of [0, 1, 2, 3, 4]) ids.push(await dueAt(a, now - 10_000 + i));
    ids.push(await dueAt(b, now - 1_000));
    // One each: A's five older due deliveries do not starve B's one.
    const first = await claim(3, 1);
    expect(first.map((d) => d.id).sort()).toEqual([ids[0]!, ids[5]!].sort());
    expect(first.map((d) => d.attempt)).toEqual([1, 1]);
    // A's one allowed attempt is in flight: nothing more of A, B has nothing due.
    expect(await claim(3, 1)).toEqual([]);
    // Allowed two, A gets its next oldest.
    const next = await claim(3, 2);
    expect(next.map((d) => d.id)).toEqual([ids[1]!]);
  });

  it('does not hold a newer delivery back behind one of the same webhook waiting for its retry', async () => {
    const hook = newId('whk');
    const older = await enqueueDelivery(t.deps.db, t.deps.queue, hook, 'deployment.created', '{}');
    const [first] = await claim(1, 1);
    expect(first?.id).toBe(older);
    const status = await recordAttempt(t.deps.db, t.deps.clock, first!, {
      at: t.deps.clock.now().toISOString(),
      durationMs: 5,
      outcome: { kind: 'failed', statusCode: 503, error: null },
    });
    expect(status).toBe('pending');
    const [waiting] = await readDeliveries(t.deps.db, { id: older });
    expect(waiting).toMatchObject({ status: 'pending', attempt_count: 1 });
    // The retry waits about 10 s (backoff.ts).
    expect(Date.parse(waiting!.next_attempt_at!) - t.deps.clock.now().getTime()).toBeGreaterThan(8_000);

    const newer = await enqueueDelivery(t.deps.db, t.deps.queue, hook, 'deployment.created', '{}');
    // Even allowed one attempt at a time, the webhook's newer delivery goes now: the older one
    // holds no slot while it waits.
    const next = await claim(3, 1);
    expect(next.map((d) => d.id)).toEqual([newer]);
    expect(await claim(3, 1)).toEqual([]);
  });
});
