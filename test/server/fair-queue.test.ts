import { afterEach, describe, expect, it } from 'vitest';
import { turnOrder, type Fairness, type Turn } from '../../server/platform/queue/fair-claim.ts';
import { buildsPerOrganization } from '../../server/features/builds/job/build-job.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

const turn = (key: string, over: Partial<Turn> = {}): Turn => ({
  key,
  running: 0,
  limit: null,
  lastClaimedAt: null,
  firstDueAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('the order in which owners get a free slot', () => {
  it('skips owners at their limit and serves those with fewer running first', () => {
    expect(
      turnOrder([
        turn('a', { running: 2, limit: 2 }),
        turn('b', { running: 1 }),
        turn('c', { running: 0, firstDueAt: '2026-01-02T00:00:00.000Z' }),
      ]),
    ).toEqual(['c', 'b']);
  });

  it('with equal shares, serves the owner served longest ago, then the one waiting longest', () => {
    expect(
      turnOrder([
        turn('a', { lastClaimedAt: '2026-01-01T00:00:09.000Z', firstDueAt: '2026-01-01T00:00:00.000Z' }),
        turn('b', { lastClaimedAt: '2026-01-01T00:00:05.000Z', firstDueAt: '2026-01-01T00:00:08.000Z' }),
        turn('c', { lastClaimedAt: null, firstDueAt: '2026-01-01T00:00:07.000Z' }),
        turn('d', { lastClaimedAt: null, firstDueAt: '2026-01-01T00:00:06.000Z' }),
      ]),
    ).toEqual(['d', 'c', 'b', 'a']);
  });
});

describe('fair claims of a durable queue', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const KIND = 'test.fair';
  const unlimited: Fairness = { limits: async (_db, keys) => new Map(keys.map((k) => [k, null])) };

  /** Two organizations, A queueing `a` jobs before B queues `b`, one millisecond apart each. */
  async function queued(a: number, b: number, env: Record<string, string> = {}) {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    t = await createTestApp({ clock, env });
    const orgA = (await t.user('a@example.com')).orgId;
    const orgB = (await t.user('b@example.com')).orgId;
    const enqueue = async (org: string, label: string) => {
      await t!.deps.queue.enqueue(t!.deps.db, KIND, { label }, { fairKey: org });
      clock.advance(1);
    };
    for (let i = 1; i <= a; i++) await enqueue(orgA, `a${i}`);
    for (let i = 1; i <= b; i++) await enqueue(orgB, `b${i}`);
    const claim = async (fairness: Fairness, worker = 'w') => {
      const job = await t!.deps.queue.claim([KIND], worker, 60_000, fairness);
      return job && { id: job.id, label: (JSON.parse(job.payload) as { label: string }).label };
    };
    return { clock, orgA, orgB, claim, deps: t.deps };
  }

  it('gives the second slot to the organization that queued after another queued six', async () => {
    const { claim } = await queued(6, 1);
    expect((await claim(unlimited))?.label).toBe('a1');
    // Oldest first would give a2.
    expect((await claim(unlimited))?.label).toBe('b1');
    expect((await claim(unlimited))?.label).toBe('a2');
  });

  it('takes turns through one slot, whoever queued more', async () => {
    const { claim, clock, deps } = await queued(3, 2);
    const order: string[] = [];
    for (;;) {
      const job = await claim(unlimited);
      if (!job) break;
      order.push(job.label);
      clock.advance(1000);
      await deps.queue.complete(job.id, 'w');
    }
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
  });

  it("holds an organization to its plan's builds, in every process, until one of its jobs ends", async () => {
    const { claim, deps, orgA } = await queued(3, 1, { SLIPWAY_FREE_LIMITS: 'builds=1' });
    const plans = buildsPerOrganization(deps.config.plans);
    const first = await claim(plans, 'w1');
    expect(first?.label).toBe('a1');
    expect((await claim(plans, 'w2'))?.label).toBe('b1');
    // A is at its limit of 1 and B has nothing left: another worker finds nothing to do.
    expect(await claim(plans, 'w3')).toBeNull();
    await deps.queue.complete(first!.id, 'w1');
    expect((await claim(plans, 'w3'))?.label).toBe('a2');
    // On another plan the same organization may run more at once.
    await deps.db.updateTable('organizations').set({ plan: 'pro' }).where('id', '=', orgA).execute();
    expect((await claim(plans, 'w4'))?.label).toBe('a3');
  });

  it('counts a job whose lease ran out as not running, and claims it again in its turn', async () => {
    const { claim, clock, deps } = await queued(2, 0, { SLIPWAY_FREE_LIMITS: 'builds=1' });
    const plans = buildsPerOrganization(deps.config.plans);
    const first = await claim(plans, 'dead-worker');
    expect(first?.label).toBe('a1');
    expect(await claim(plans, 'w2')).toBeNull();
    clock.advance(60_001);
    const again = await claim(plans, 'w2');
    expect(again).toEqual(first);
    expect(await claim(plans, 'w3')).toBeNull();
  });

  it('never starts more of one organization than its limit when workers claim at the same moment', async () => {
    const { claim, deps } = await queued(8, 0, { SLIPWAY_FREE_LIMITS: 'builds=2' });
    const plans = buildsPerOrganization(deps.config.plans);
    const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => claim(plans, `w${i}`)));
    expect(
      claims
        .filter(Boolean)
        .map((c) => c!.label)
        .sort(),
    ).toEqual(['a1', 'a2']);
    const running = await deps.db.selectFrom('jobs').select('id').where('status', '=', 'running').execute();
    expect(running).toHaveLength(2);
  });

  it('claims several in one go in the same order as one at a time, each owner held to its limit', async () => {
    const twoEach: Fairness = { limits: async (_db, keys) => new Map(keys.map((k) => [k, 2])) };
    const labelsOf = (jobs: { payload: string }[]) =>
      jobs.map((j) => (JSON.parse(j.payload) as { label: string }).label);
    const one = await queued(5, 3);
    const singly: string[] = [];
    for (let job = await one.claim(twoEach); job; job = await one.claim(twoEach)) singly.push(job.label);
    await t!.close();
    const many = await queued(5, 3);
    const batch = await many.deps.queue.claimMany([KIND], 'w', 60_000, 10, twoEach);
    expect(labelsOf(batch)).toEqual(singly);
    expect(singly).toEqual(['a1', 'b1', 'a2', 'b2']);
    // Both owners are at their limit: nothing more until one of their jobs ends.
    expect(await many.deps.queue.claimMany([KIND], 'w2', 60_000, 10, twoEach)).toEqual([]);
    await many.deps.queue.complete(batch[0]!.id, 'w');
    expect(labelsOf(await many.deps.queue.claimMany([KIND], 'w2', 60_000, 10, twoEach))).toEqual(['a3']);
    // Without fairness: the oldest due first, up to the number asked for.
    await many.deps.queue.enqueue(many.deps.db, 'test.plain', { label: 'p1' });
    many.clock.advance(1);
    await many.deps.queue.enqueue(many.deps.db, 'test.plain', { label: 'p2' });
    many.clock.advance(1);
    await many.deps.queue.enqueue(many.deps.db, 'test.plain', { label: 'p3' });
    expect(labelsOf(await many.deps.queue.claimMany(['test.plain'], 'w', 60_000, 2))).toEqual(['p1', 'p2']);
  });

  it('still claims jobs queued without an owner (before owners were recorded)', async () => {
    const { claim, deps } = await queued(1, 0);
    await deps.queue.enqueue(deps.db, KIND, { label: 'legacy' });
    const labels = [(await claim(unlimited))?.label, (await claim(unlimited))?.label];
    expect(labels.sort()).toEqual(['a1', 'legacy']);
  });
});
