import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITHUB_DELIVERY_MAX_BYTES } from '../../api/schemas/github-events.ts';
import {
  FINISHED_EVENT_RETENTION_MS,
  GITHUB_EVENT_RETENTION_MS,
  MAX_ATTEMPTS,
  pruneGitHubEvents,
} from '../../server/features/github/events/finish-event.ts';
import { GITHUB_EVENT_JOB } from '../../server/features/github/events/event-job.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

const SIG = `sha256=${'a'.repeat(64)}`;

/** The GitHub App's durable queue in the service: stored once, claimed in order per key, retried, handed back. */
describe('GitHub events queue', () => {
  let t: TestApp;
  let clock: ManualClock;
  let bot: TestUser;
  /** Another App's token: its own queue. */
  let other: TestUser;
  /** A user of the service with an ordinary token and no App. */
  let stranger: TestUser;
  let n = 0;

  beforeAll(async () => {
    clock = new ManualClock();
    t = await createTestApp({ clock });
    bot = await t.user('bot@example.com', { githubApp: true });
    other = await t.user('other@example.com', { githubApp: true });
    stranger = await t.user('stranger@example.com');
    for (const u of [bot, other, stranger]) {
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

  it('counts a claim that ran out as a try, and gives up an event the App never finishes', async () => {
    const ev = await store('dies#1');
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const [c] = await claim(bot, 1000);
      expect(c).toMatchObject({ id: ev.id, attempts: i });
      clock.advance(1001);
    }
    // The App died on it every time: the next claim gives it up instead of handing it out.
    expect(await claim()).toEqual([]);
    const row = await t.deps.db
      .selectFrom('jobs')
      .select(['status', 'last_error'])
      .where('id', '=', ev.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      status: 'failed',
      last_error: `given up: claimed ${MAX_ATTEMPTS} times without finishing (the App stopped while running it)`,
    });
  });

  it('refuses every token but the App’s own, before reading the body: nothing is stored', async () => {
    const count = async () =>
      Number(
        (
          await t.deps.db
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('kind', '=', GITHUB_EVENT_JOB)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    // The attack: four 8 MiB bodies with a made-up signature, from a user with no App.
    const big = JSON.stringify({ action: 'opened', pad: 'x'.repeat(8 * 1024 * 1024) });
    for (let i = 0; i < 4; i++) {
      const res = await t.call(stranger, 'POST', '/v1/github/events', {
        deliveryId: `fill-${i}`,
        name: 'pull_request',
        body: big,
        signature: SIG,
        orderingKey: 'fill#1',
      });
      expect(res.status, res.text).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN' });
      expect(res.body.error.message).toContain(
        "Only the GitHub App's own token may use POST /v1/github/events",
      );
      expect(res.body.error.message).toContain('slipway token create');
      expect(res.body.error.message).toContain('--github-app');
    }
    expect(await count()).toBe(before);
    expect((await t.call(stranger, 'POST', '/v1/github/events/claim', { limit: 1 })).status).toBe(403);
    const finish = await t.call(stranger, 'POST', '/v1/github/events/ghe_x/finish', {
      lease: 'x',
      outcome: 'done',
    });
    expect(finish.status).toBe(403);
  });

  it('takes a delivery of up to 25 MiB, as GitHub sends, and answers 413 naming the limit beyond', async () => {
    const wrap = (size: number) => {
      const head = '{"action":"opened","pad":"';
      return head + 'x'.repeat(size - head.length - 2) + '"}';
    };
    const over = await t.call(bot, 'POST', '/v1/github/events', {
      deliveryId: 'too-large',
      name: 'pull_request',
      body: wrap(GITHUB_DELIVERY_MAX_BYTES + 1),
      signature: SIG,
      orderingKey: 'large#1',
    });
    expect(over.status, over.text.slice(0, 300)).toBe(413);
    expect(over.body.error.code).toBe('VALIDATION_ERROR');
    expect(over.body.error.message).toContain(
      'A GitHub delivery is at most 25 MiB (26214400 bytes of UTF-8)',
    );
    expect(over.body.error.message).toContain('this body is 26214401 bytes');
    const atLimit = await t.call(bot, 'POST', '/v1/github/events', {
      deliveryId: 'at-limit',
      name: 'pull_request',
      body: wrap(GITHUB_DELIVERY_MAX_BYTES),
      signature: SIG,
      orderingKey: 'large#1',
    });
    expect(atLimit.status, atLimit.text.slice(0, 300)).toBe(202);
    await drain();
  });

  it('keeps an event once by its name and body too: a replay under a new delivery id is a duplicate', async () => {
    const payload = JSON.stringify({ action: 'closed', number: 7, pull_request: { merged: true } });
    const send = (deliveryId: string, name = 'pull_request') =>
      t.call(bot, 'POST', '/v1/github/events', {
        deliveryId,
        name,
        body: payload,
        signature: SIG,
        orderingKey: `replay#${name}`,
      });
    const first = await send('replay-1');
    expect(first.status).toBe(202);
    expect(first.body.data.duplicate).toBe(false);
    for (let i = 2; i <= 10; i++) {
      const again = await send(`replay-${i}`);
      expect(again.status).toBe(202);
      expect(again.body.data).toMatchObject({
        id: first.body.data.id,
        deliveryId: 'replay-1',
        duplicate: true,
      });
    }
    // Another event name with the same bytes is another event; so is another App's queue.
    expect((await send('replay-other-name', 'issue_comment')).body.data.duplicate).toBe(false);
    const claimed = await claim();
    expect(claimed.map((e) => e.deliveryId).sort()).toEqual(['replay-1', 'replay-other-name']);
    for (const e of claimed) await finish(e.id, e.lease, 'done');
    // Still a duplicate once processed, for as long as the event is kept.
    expect((await send('replay-11')).body.data.duplicate).toBe(true);
    expect(await claim()).toEqual([]);
  });

  it('deletes finished events after a week, and expires open ones a week after they came', async () => {
    await drain();
    const old = await store('prune#1');
    clock.advance(GITHUB_EVENT_RETENTION_MS / 2);
    const recent = await store('prune#2');
    expect(FINISHED_EVENT_RETENTION_MS).toBe(GITHUB_EVENT_RETENTION_MS);
    clock.advance(GITHUB_EVENT_RETENTION_MS / 2 + 1000);
    expect(await pruneGitHubEvents(t.deps)).toBeGreaterThan(0);
    const left = await t.deps.db
      .selectFrom('jobs')
      .select(['id', 'status'])
      .where('kind', '=', GITHUB_EVENT_JOB)
      .execute();
    // A pending event is a queued job.
    expect(left).toEqual([{ id: recent.id, status: 'queued' }]);
    expect(left.map((e) => e.id)).not.toContain(old.id);
  });
});
