import { afterEach, describe, expect, it } from 'vitest';
import { consumeRateLimit } from '../../server/platform/http/rate-limit.ts';
import { prepared } from '../../server/platform/store/prepared.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Frequent writes (group commit on the embedded database, asynchronous commit on PostgreSQL)
 * must behave exactly like statements run alone: the same rows, the same failures, no work lost.
 */
describe('frequent-write prebuilt statements', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const count = async (userId: string) => {
    await t!.deps.rateCounts.flush();
    return (
      await t!.deps.db
        .selectFrom('rate_limits')
        .select('count')
        .where('user_id', '=', userId)
        .executeTakeFirst()
    )?.count;
  };

  it('compiles a statement once per store, and runs it on that store’s own database', async () => {
    t = await createTestApp();
    const other = await createTestApp();
    try {
      let builds = 0;
      const windows = prepared<[string], { window_start: number }>(1, (d, userId) => {
        builds += 1;
        return d.selectFrom('rate_limits').select('window_start').where('user_id', '=', userId);
      });
      await t.deps.db
        .insertInto('rate_limits')
        .values({ user_id: 'usr_one', window_start: 1, count: 1 })
        .execute();
      await other.deps.db
        .insertInto('rate_limits')
        .values({ user_id: 'usr_one', window_start: 2, count: 1 })
        .execute();
      // PostgreSQL answers bigint columns as strings.
      const run = async (app: TestApp, userId: string) =>
        (await app.deps.store.run(windows, userId)).map((r) => Number(r.window_start));
      expect(await run(t, 'usr_one')).toEqual([1]);
      expect(await run(t, 'usr_two')).toEqual([]);
      expect(builds).toBe(1);
      expect(await run(other, 'usr_one')).toEqual([2]);
      expect(builds).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('counts 50 requests made at once exactly: 30 allowed with distinct remainders, 20 refused', async () => {
    t = await createTestApp();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => consumeRateLimit(t!.deps, 'usr_concurrent', 30)),
    );
    const allowed = results.filter((r) => r.allowed);
    expect(allowed).toHaveLength(30);
    expect(allowed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );
    expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0)).toBe(true);
    expect(await count('usr_concurrent')).toBe(30);
  });

  it('waits for a transaction open on the connection, and is not rolled back with it', async () => {
    t = await createTestApp();
    const deps = t.deps;
    let during: Promise<unknown> | undefined;
    await expect(
      deps.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('rate_limits')
          .values({ user_id: 'usr_in_tx', window_start: 0, count: 1 })
          .execute();
        // Counted while the transaction is open; the transaction then fails.
        during = consumeRateLimit(deps, 'usr_beside_tx', 10);
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await during).toMatchObject({ allowed: true, remaining: 9 });
    expect(await count('usr_beside_tx')).toBe(1);
    expect(await count('usr_in_tx')).toBeUndefined();
  });

  it('fails only the call whose statement fails, not the others of its group', async () => {
    t = await createTestApp();
    const statement = prepared<[string], never>(
      1,
      (d, userId) => d.insertInto('rate_limits').values({ user_id: userId, window_start: 7, count: 1 }),
      { frequentWrite: true },
    );
    const insert = (userId: string) => t!.deps.store.run(statement, userId);
    const results = await Promise.allSettled([
      insert('usr_a'),
      insert('usr_b'),
      insert('usr_a'),
      insert('usr_c'),
    ]);
    // The two inserts of usr_a race (on PostgreSQL, over two connections): exactly one fails.
    const [a1, b, a2, c] = results.map((r) => r.status);
    expect([b, c]).toEqual(['fulfilled', 'fulfilled']);
    expect([a1, a2].sort()).toEqual(['fulfilled', 'rejected']);
    const rows = await t.deps.db
      .selectFrom('rate_limits')
      .select('user_id')
      .where('window_start', '=', 7)
      .orderBy('user_id')
      .execute();
    expect(rows.map((r) => r.user_id)).toEqual(['usr_a', 'usr_b', 'usr_c']);
  });
});
