import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FINISHED_EVENT_RETENTION_MS,
  MAX_ATTEMPTS,
  pruneGitHubEvents,
} from '../../server/services/github-events/finish-event.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

const SIG = `sha256=${'a'.repeat(64)}`;

/** The GitHub App's durable queue in the service: stored once, claimed in order per key, retried, handed back. */
describe('GitHub events queue', () => {
  let t: TestApp;
  let clock: ManualClock;
  let bot: TestUser;
  let other: TestUser;
  let n = 0;

  beforeAll(async () => {
    clock = new ManualClock();
    t = await createTestApp({ clock });
    bot = await t.user('bot@example.com');
    other = await t.user('other@example.com');
    for (const u of [bot, other]) {
      await t.deps.db
        .updateTable('organizations')
        .set({ plan: 'enterprise' })
        .where('id', '=', u.orgId)
        .execute();
    }
  });
  afterAll(() => t.close());

  const store = async (orderingKey: string, user = bot, deliveryId = `d-${++n}`) => {
    const res = await t.call(user, 'POST', '/v1/github/events', {
      deliveryId,
      name: 'pull_request',
      body: JSON.stringify({ action: 'opened', n }),
      signature: SIG,
      orderingKey,
    });
    expect(res.status, res.text).toBe(202);
    return res.body.data as { id: string; duplicate: boolean; deliveryId: string };
  };
  const claim = async (user = bot, leaseMs = 60_000) => {
    const res = await t.call(user, 'POST', '/v1/github/events/claim', { limit: 10, leaseMs });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { id: string; deliveryId: string; lease: string; attempts: number }[];
  };
  const finish = (id: string, lease: string, outcome: string, user = bot) =>
    t.call(user, 'POST', `/v1/github/events/${id}/finish`, { lease, outcome, error: 'boom' });
  /** Finishes whatever is still open, so each test starts with an empty queue. */
  const drain = async () => {
    for (let c = await claim(); c.length > 0; c = await claim()) {
      for (const e of c) await finish(e.id, e.lease, 'done');
    }
  };

  it('keeps a delivery once, and names a malformed field', async () => {
    const a = await store('r#1', bot, 'same-delivery');
    const b = await store('r#1', bot, 'same-delivery');
    expect(a.duplicate).toBe(false);
    expect(b).toMatchObject({ id: a.id, duplicate: true });
    const bad = await t.call(bot, 'POST', '/v1/github/events', {
      deliveryId: 'x',
      name: 'pull_request',
      body: '{}',
      signature: 'sha1=abc',
      orderingKey: 'k',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('signature: must be sha256=<64 hex digits>');
    await drain();
  });

  it('gives each key’s oldest open event first, one at a time, and other keys in parallel', async () => {
    const a1 = await store('repo#1');
    const a2 = await store('repo#1');
    const b1 = await store('repo#2');
    let claimed = await claim();
    expect(claimed.map((e) => e.id)).toEqual([a1.id, b1.id]);
    expect(await claim()).toEqual([]);
    expect((await finish(a1.id, claimed[0]!.lease, 'done')).body.data).toMatchObject({
      status: 'done',
      attempts: 1,
    });
    await finish(b1.id, claimed[1]!.lease, 'done');
    claimed = await claim();
    expect(claimed.map((e) => e.id)).toEqual([a2.id]);
    await finish(a2.id, claimed[0]!.lease, 'done');
    await drain();
  });

  it('keeps each user’s queue to that user', async () => {
    const mine = await store('k', bot);
    expect(await claim(other)).toEqual([]);
    const [e] = await claim(bot);
    expect(e!.id).toBe(mine.id);
    expect((await finish(mine.id, e!.lease, 'done', other)).status).toBe(404);
    await finish(mine.id, e!.lease, 'done');
  });

  it('retries with backoff, gives up after the last try, and hands back at once on release', async () => {
    const ev = await store('retry#1');
    let [c] = await claim();
    let res = await finish(ev.id, c!.lease, 'retry');
    expect(res.body.data).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await claim()).toEqual([]);
    clock.advance(2000);
    [c] = await claim();
    expect(c).toMatchObject({ id: ev.id, attempts: 1 });
    res = await finish(ev.id, c!.lease, 'release');
    expect(res.body.data).toMatchObject({ status: 'pending', attempts: 1 });
    [c] = await claim();
    expect(c!.id).toBe(ev.id);
    for (let i = 1; i < MAX_ATTEMPTS; i++) {
      res = await finish(ev.id, c!.lease, 'retry');
      expect(res.status, `try ${i}: ${res.text}`).toBe(200);
      clock.advance(31 * 60_000);
      if (i < MAX_ATTEMPTS - 1) {
        const got = await claim();
        expect(
          got.map((e) => e.id),
          `claim after try ${i}`,
        ).toEqual([ev.id]);
        c = got[0];
      }
    }
    expect(res.body.data).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, nextAttemptAt: null });
    expect(await claim()).toEqual([]);
  });

  it('gives an event whose claim ran out to the next worker, and refuses the old claim', async () => {
    const ev = await store('lease#1');
    const [first] = await claim(bot, 1000);
    clock.advance(1001);
    const [second] = await claim(bot, 60_000);
    expect(second).toMatchObject({ id: ev.id });
    expect(second!.lease).not.toBe(first!.lease);
    const stale = await finish(ev.id, first!.lease, 'done');
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toContain('is not held by this claim');
    expect((await finish(ev.id, second!.lease, 'done')).status).toBe(200);
  });

  it('deletes finished events after a week, and keeps open ones', async () => {
    const open = await store('prune#1');
    clock.advance(FINISHED_EVENT_RETENTION_MS + 1000);
    expect(await pruneGitHubEvents(t.deps)).toBeGreaterThan(0);
    const left = await t.deps.db.selectFrom('github_events').select(['id', 'status']).execute();
    expect(left).toEqual([{ id: open.id, status: 'pending' }]);
  });
});
