import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryRateCounts } from '../../server/platform/deps/rate-counts/rate-counts-memory.ts';
import { consumeRateLimit } from '../../server/platform/http/rate-limit.ts';
import type { Store } from '../../server/platform/store/db.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

/** On SQLite the serving process counts requests in memory and writes them behind. */
describe.skipIf(testDialect() !== 'sqlite')('rate-limit counts written behind (SQLite)', () => {
  const apps: TestApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  const open = async (dataDir?: string) => {
    const app = await createTestApp(dataDir ? { dataDir } : { keepDataDir: true });
    apps.push(app);
    return app;
  };
  const stored = async (t: TestApp, userId: string) =>
    (await t.deps.db.selectFrom('rate_limits').select('count').where('user_id', '=', userId).execute()).map(
      (r) => Number(r.count),
    );

  it('counts exactly in memory, writes on flush, and loses nothing when the process stops', async () => {
    const t = await open();
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) remaining.push((await consumeRateLimit(t.deps, 'usr_behind', 6)).remaining);
    expect(remaining).toEqual([5, 4, 3, 2, 1]);
    expect(await stored(t, 'usr_behind')).toEqual([]);
    await t.deps.rateCounts.flush();
    expect(await stored(t, 'usr_behind')).toEqual([5]);
    expect(await consumeRateLimit(t.deps, 'usr_behind', 6)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await consumeRateLimit(t.deps, 'usr_behind', 6)).toMatchObject({ allowed: false, remaining: 0 });
    // Stopping writes what is left; a new process starts from the stored count.
    await t.close();
    apps.splice(apps.indexOf(t), 1);
    const again = await open(t.dataDir);
    try {
      expect(await stored(again, 'usr_behind')).toEqual([6]);
      expect(await consumeRateLimit(again.deps, 'usr_behind', 6)).toMatchObject({ allowed: false });
    } finally {
      await again.close();
      apps.splice(apps.indexOf(again), 1);
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });

  it('writes on its own every interval', async () => {
    const t = await open();
    const counts = createMemoryRateCounts(t.deps.store, { intervalMs: 20 });
    try {
      for (let i = 0; i < 3; i++) await counts.take('usr_timer', 0, 10);
      await vi.waitFor(async () => expect(await stored(t, 'usr_timer')).toEqual([3]), { timeout: 5000 });
    } finally {
      await counts.close();
    }
  });

  it('keeps the counts of a failed write for the next one, and counts meanwhile', async () => {
    const t = await open();
    let failNext = true;
    const flaky: Pick<Store, 'run'> = {
      run: (statement, ...params) => {
        if (statement.options.frequentWrite && failNext) {
          failNext = false;
          return Promise.reject(new Error('disk full'));
        }
        return t.deps.store.run(statement, ...params);
      },
    };
    const counts = createMemoryRateCounts(flaky, { intervalMs: 60_000 });
    try {
      for (let i = 0; i < 4; i++) await counts.take('usr_flaky', 0, 10);
      await expect(counts.flush()).rejects.toThrow('disk full');
      expect(await stored(t, 'usr_flaky')).toEqual([]);
      expect(await counts.take('usr_flaky', 0, 10)).toEqual({ count: 5 });
      await counts.flush();
      expect(await stored(t, 'usr_flaky')).toEqual([5]);
      // Another process's count (or an operator's change) joins at the next write.
      await t.deps.db
        .updateTable('rate_limits')
        .set({ count: 8 })
        .where('user_id', '=', 'usr_flaky')
        .execute();
      expect(await counts.take('usr_flaky', 0, 10)).toEqual({ count: 6 });
      await counts.flush();
      expect(await stored(t, 'usr_flaky')).toEqual([9]);
      expect(await counts.take('usr_flaky', 0, 10)).toEqual({ count: 10 });
      expect(await counts.take('usr_flaky', 0, 10)).toEqual({ count: null });
    } finally {
      await counts.close();
    }
  });
});
