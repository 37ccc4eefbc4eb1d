import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { createJobQueue } from '../../server/platform/queue/queue.ts';
import { claimGitHubEvents } from '../../server/features/github/events/claim-events.ts';
import { finishGitHubEvent } from '../../server/features/github/events/finish-event.ts';
import { storeGitHubEvent } from '../../server/features/github/events/store-event.ts';
import type { Actor, Deps } from '../../server/platform/deps/deps.ts';
import { ManualClock } from '../helpers/clock.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';

const SIG = `sha256=${'a'.repeat(64)}`;
const sha = (body: string) => createHash('sha256').update(body, 'utf8').digest('hex');

it('moves the events stored before into jobs: claimable in their order, claims held, replays still known', async () => {
  await withMigratingStore('slipway-events-as-jobs-', async ({ store, migrator }) => {
    const clock = new ManualClock();
    const now = clock.now().toISOString();
    const later = new Date(clock.now().getTime() + 60_000).toISOString();
    const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('029_ordered_jobs')).error).toBeUndefined();
    for (const id of ['usr_a', 'usr_b'])
      await db
        .insertInto('users')
        .values({ id, email: `${id}@example.com`, created_at: now })
        .execute();
    const event = (id: string, owner: string, key: string, over: Record<string, unknown> = {}) => {
      const body = JSON.stringify({ action: 'synchronize', id });
      return {
        id,
        owner_user_id: owner,
        delivery_id: `d-${id}`,
        name: 'pull_request',
        body,
        body_sha256: sha(body),
        signature: SIG,
        ordering_key: key,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        received_at: now,
        ...over,
      };
    };
    // One at a time, so each gets the next seq: the order they came in.
    for (const row of [
      event('ghe_done', 'usr_a', 'repo#3', { status: 'done', attempts: 1, finished_at: now }),
      event('ghe_a1', 'usr_a', 'repo#1'),
      event('ghe_held', 'usr_a', 'repo#2', { status: 'running', lease: 'old-lease', lease_until: later }),
      event('ghe_a2', 'usr_a', 'repo#1', { attempts: 2, last_error: 'boom' }),
      event('ghe_b1', 'usr_b', 'repo#1'),
    ])
      await db.insertInto('github_events').values(row).execute();

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const tables = (await store.db.introspection.getTables()).map((t) => t.name);
    expect(tables).not.toContain('github_events');
    const jobs = await db
      .selectFrom('jobs')
      .select(['id', 'status', 'attempts', 'ordering_key', 'owner_user_id', 'locked_by'])
      .where('kind', '=', 'github.event')
      .orderBy('id')
      .execute();
    expect(jobs.map((j) => ({ ...j, attempts: Number(j.attempts) }))).toEqual([
      {
        id: 'ghe_a1',
        status: 'queued',
        attempts: 0,
        ordering_key: 'usr_a/repo#1',
        owner_user_id: 'usr_a',
        locked_by: null,
      },
      {
        id: 'ghe_a2',
        status: 'queued',
        attempts: 2,
        ordering_key: 'usr_a/repo#1',
        owner_user_id: 'usr_a',
        locked_by: null,
      },
      {
        id: 'ghe_b1',
        status: 'queued',
        attempts: 0,
        ordering_key: 'usr_b/repo#1',
        owner_user_id: 'usr_b',
        locked_by: null,
      },
      {
        id: 'ghe_done',
        status: 'done',
        attempts: 1,
        ordering_key: 'usr_a/repo#3',
        owner_user_id: 'usr_a',
        locked_by: null,
      },
      {
        id: 'ghe_held',
        status: 'running',
        attempts: 1,
        ordering_key: 'usr_a/repo#2',
        owner_user_id: 'usr_a',
        locked_by: 'old-lease',
      },
    ]);

    const deps = {
      db: store.db,
      clock,
      queue: createJobQueue(store.db, store.dialect, clock),
    } as unknown as Deps;
    const actor = (userId: string): Actor => ({
      userId,
      email: `${userId}@example.com`,
      tokenId: 'tok',
      githubApp: true,
    });
    const a = actor('usr_a');
    // Stored after the upgrade on a key with events from before: it comes after them.
    const a3 = await storeGitHubEvent(deps, a, {
      deliveryId: 'd-a3',
      name: 'pull_request',
      body: '{"action":"closed"}',
      signature: SIG,
      orderingKey: 'repo#1',
    });
    expect(a3.duplicate).toBe(false);
    const claim = async (who = a) =>
      (await claimGitHubEvents(deps, who, { limit: 10, leaseMs: 60_000 })).map((e) => ({
        id: e.id,
        attempts: e.attempts,
        lease: e.lease,
        deliveryId: e.deliveryId,
      }));

    // repo#2's event is still held by the claim from before the upgrade; repo#1 gives its oldest.
    let got = await claim();
    expect(got.map((e) => [e.id, e.deliveryId, e.attempts])).toEqual([['ghe_a1', 'd-ghe_a1', 0]]);
    expect(
      await finishGitHubEvent(deps, a, 'ghe_held', { lease: 'old-lease', outcome: 'done' }),
    ).toMatchObject({ status: 'done', attempts: 1 });
    await finishGitHubEvent(deps, a, 'ghe_a1', { lease: got[0]!.lease, outcome: 'done' });
    got = await claim();
    expect(got.map((e) => [e.id, e.attempts])).toEqual([['ghe_a2', 2]]);
    await finishGitHubEvent(deps, a, 'ghe_a2', { lease: got[0]!.lease, outcome: 'done' });
    expect((await claim()).map((e) => e.id)).toEqual([a3.id]);
    expect((await claim(actor('usr_b'))).map((e) => e.id)).toEqual(['ghe_b1']);

    // A replay of an event from before the upgrade, under a new delivery id: still a duplicate.
    const replay = await storeGitHubEvent(deps, a, {
      deliveryId: 'd-replayed',
      name: 'pull_request',
      body: JSON.stringify({ action: 'synchronize', id: 'ghe_done' }),
      signature: SIG,
      orderingKey: 'repo#3',
    });
    expect(replay).toMatchObject({
      id: 'ghe_done',
      deliveryId: 'd-ghe_done',
      status: 'done',
      duplicate: true,
    });
  });
});
