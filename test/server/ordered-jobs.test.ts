import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

/** Ordering keys, owners and dedupe keys of the shared queue (docs/architecture.md#plan-one-durable-queue). */
describe('ordered jobs in the durable queue', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const KIND = 'test.ordered';

  /** Enqueues `[label, key]` pairs one millisecond apart. */
  async function queued(jobs: [string, string | null][]) {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    t = await createTestApp({ clock });
    const deps = t.deps;
    const ids = new Map<string, string>();
    for (const [label, key] of jobs) {
      ids.set(label, await deps.queue.enqueue(deps.db, KIND, { label }, key ? { orderingKey: key } : {}));
      clock.advance(1);
    }
    const claim = async (worker = 'w', leaseMs = 60_000) => {
      const job = await deps.queue.claim([KIND], worker, leaseMs);
      return job && (JSON.parse(job.payload) as { label: string }).label;
    };
    return { clock, deps, ids: (label: string) => ids.get(label)!, claim };
  }

  it('runs one job of a key at a time, oldest first, while other keys and unkeyed jobs go on', async () => {
    const { deps, ids, claim } = await queued([
      ['k1', 'k'],
      ['k2', 'k'],
      ['m1', 'm'],
      ['free', null],
    ]);
    expect(await claim()).toBe('k1');
    // k2 is older than m1's and free's turn would allow, but k1 is still open.
    expect(await claim()).toBe('m1');
    expect(await claim()).toBe('free');
    expect(await claim()).toBeNull();
    expect(await deps.queue.complete(ids('k1'), 'w')).toBe(true);
    expect(await claim()).toBe('k2');
    expect(await claim()).toBeNull();
  });

  it('holds a key while its older job waits for a retry, or ran out of lease and is taken again', async () => {
    const { clock, deps, ids, claim } = await queued([
      ['k1', 'k'],
      ['k2', 'k'],
    ]);
    expect(await claim('w1')).toBe('k1');
    expect(await deps.queue.fail(ids('k1'), 'w1', 'boom', new Date(clock.now().getTime() + 60_000))).toBe(
      true,
    );
    expect(await claim('w2')).toBeNull();
    clock.advance(60_000);
    expect(await claim('w2', 1000)).toBe('k1');
    clock.advance(1001);
    // w2 died: its job comes back before the next of the key.
    expect(await claim('w3')).toBe('k1');
    expect(await deps.queue.complete(ids('k1'), 'w2')).toBe(false);
    expect(await deps.queue.complete(ids('k1'), 'w3')).toBe(true);
    expect(await claim('w3')).toBe('k2');
  });

  it('gives one job of a key to one of many workers claiming at the same moment', async () => {
    const { claim, deps } = await queued([
      ['k1', 'k'],
      ['k2', 'k'],
      ['k3', 'k'],
    ]);
    const got = await Promise.all(Array.from({ length: 5 }, (_, i) => claim(`w${i}`)));
    expect(got.filter((g) => g !== null)).toEqual(['k1']);
    const running = await deps.db.selectFrom('jobs').select('id').where('status', '=', 'running').execute();
    expect(running).toHaveLength(1);
  });

  it("claims only the owner's jobs when scoped to one", async () => {
    const { deps } = await queued([]);
    const a = (await t!.user('a@example.com')).userId;
    const b = (await t!.user('b@example.com')).userId;
    const mine = await deps.queue.enqueue(deps.db, KIND, {}, { ownerUserId: a, orderingKey: `${a}/k` });
    const theirs = await deps.queue.enqueue(deps.db, KIND, {}, { ownerUserId: b, orderingKey: `${b}/k` });
    expect((await deps.queue.claim([KIND], 'w', 1000, undefined, { ownerUserId: b }))?.id).toBe(theirs);
    expect(await deps.queue.claim([KIND], 'w', 1000, undefined, { ownerUserId: b })).toBeNull();
    expect((await deps.queue.claim([KIND], 'w', 1000, undefined, { ownerUserId: a }))?.id).toBe(mine);
  });

  it('keeps a job once per id and per dedupe key, and answers the kept one', async () => {
    const { deps } = await queued([]);
    const once = (n: number, opts: { id?: string; dedupeKey?: string }) =>
      deps.queue.enqueueOnce(deps.db, KIND, { n }, opts);
    const first = await once(1, { dedupeKey: 'same' });
    expect(first.duplicate).toBe(false);
    expect(await once(2, { dedupeKey: 'same' })).toEqual({ id: first.id, duplicate: true });
    expect(await once(3, { id: 'job_fixed', dedupeKey: 'other' })).toEqual({
      id: 'job_fixed',
      duplicate: false,
    });
    expect(await once(4, { id: 'job_fixed', dedupeKey: 'third' })).toEqual({
      id: 'job_fixed',
      duplicate: true,
    });
    expect(await once(5, { id: 'job_new', dedupeKey: 'same' })).toEqual({ id: first.id, duplicate: true });
    const rows = await deps.db
      .selectFrom('jobs')
      .select(['id', 'payload', 'dedupe_key'])
      .where('kind', '=', KIND)
      .orderBy('payload')
      .execute();
    expect(rows).toEqual([
      { id: first.id, payload: '{"n":1}', dedupe_key: 'same' },
      { id: 'job_fixed', payload: '{"n":3}', dedupe_key: 'other' },
    ]);
  });
});
