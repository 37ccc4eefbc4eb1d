import { sql } from 'kysely';
import { every } from '../../../core/every.ts';
import { readProjectWithRole } from '../project-with-role.ts';
import type { Store } from '../../store/db.ts';
import { prepared } from '../../store/prepared.ts';
import type { RateCounts } from './rate-counts.ts';

/**
 * The rate-limit counts on the embedded database, kept by the one process that serves it and
 * written behind: a request is counted in memory, exactly, and what was counted reaches the
 * database once a second (and when the process stops), all users' counts in one transaction.
 *
 * Every write adds this process's new requests to the stored count and reads the total back,
 * so the count in memory takes in what other processes on the same file counted (each adds its
 * own) and what an operator changed by hand, within a second. A user with nothing counted since
 * the last write is forgotten: the next request reads the count again. A crash loses at most
 * the last second of counts.
 *
 * The project a request names is read meanwhile, with the work this turn of the event loop
 * shares (server/platform/store/prepared.ts: kept until a project or membership changes).
 *
 * PostgreSQL, which several API processes share, counts every request in the database instead
 * (rate-counts-batched.ts).
 */

interface Entry {
  userId: string;
  windowStart: number;
  /** The count: the total last read from the database, and what this process added since. */
  count: number;
  /** Counted here, not yet handed to the database. */
  unsaved: number;
  /** Handed to the database, the write not yet done. */
  saving: number;
}

export const readRateCount = prepared<[string, number], { count: number }>(2, (d, userId, windowStart) =>
  d
    .selectFrom('rate_limits')
    .select('count')
    .where('user_id', '=', userId)
    .where('window_start', '=', windowStart as unknown as number),
);

/** Adds to a window's count and answers the total; the flush's writes commit together. */
const add = prepared<[string, number, number], { count: number }>(
  3,
  (d, userId, windowStart, n) =>
    d
      .insertInto('rate_limits')
      .values({
        user_id: userId,
        window_start: windowStart as unknown as number,
        count: n as unknown as number,
      })
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'window_start'])
          .doUpdateSet({ count: sql`rate_limits.count + excluded.count` }),
      )
      .returning('count'),
  { frequentWrite: true },
);

export function createMemoryRateCounts(
  store: Pick<Store, 'run'>,
  opts: { intervalMs?: number; onError?: (err: unknown) => void } = {},
): RateCounts {
  const entries = new Map<string, Entry>();
  const loading = new Map<string, Promise<Entry>>();

  const load = async (key: string, userId: string, windowStart: number): Promise<Entry> => {
    const [row] = await store.run(readRateCount, userId, windowStart);
    // Another request of the same user may have loaded it meanwhile.
    let entry = entries.get(key);
    if (!entry) {
      entry = { userId, windowStart, count: Number(row?.count ?? 0), unsaved: 0, saving: 0 };
      entries.set(key, entry);
    }
    return entry;
  };

  const entryOf = async (userId: string, windowStart: number) => {
    const key = `${windowStart}:${userId}`;
    const entry = entries.get(key);
    if (entry) return entry;
    let pending = loading.get(key);
    if (!pending) {
      pending = load(key, userId, windowStart).finally(() => loading.delete(key));
      loading.set(key, pending);
    }
    return pending;
  };

  const count = async (userId: string, windowStart: number, limit: number) => {
    const entry = await entryOf(userId, windowStart);
    if (entry.count >= limit) return null;
    entry.count++;
    entry.unsaved++;
    return entry.count;
  };

  let flushing: Promise<void> | undefined;
  const writeAll = async () => {
    const writes: Promise<void>[] = [];
    for (const [key, entry] of entries) {
      if (entry.unsaved === 0) {
        // Nothing new since the last write: forgotten, read again on the next request.
        if (entry.saving === 0) entries.delete(key);
        continue;
      }
      const n = entry.unsaved;
      entry.unsaved = 0;
      entry.saving += n;
      writes.push(
        store.run(add, entry.userId, entry.windowStart, n).then(
          ([row]) => {
            entry.saving -= n;
            // The stored total (this write and every other process's), and what was counted since.
            if (row) entry.count = Number(row.count) + entry.unsaved;
          },
          (err: unknown) => {
            // Kept to be written next time.
            entry.saving -= n;
            entry.unsaved += n;
            throw err;
          },
        ),
      );
    }
    const failed = (await Promise.allSettled(writes)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  const flush = async () => {
    // One write at a time: a slow one is followed by the next, not overtaken.
    while (flushing) await flushing;
    flushing = writeAll().finally(() => (flushing = undefined));
    return flushing;
  };

  const timer = every(opts.intervalMs ?? 1000, flush, { onError: (err) => opts.onError?.(err) });
  return {
    async take(userId, windowStart, limit, projectId) {
      const [counted, project] = await Promise.all([
        count(userId, windowStart, limit),
        projectId === undefined ? undefined : readProjectWithRole({ store }, userId, projectId),
      ]);
      return project === undefined ? { count: counted } : { count: counted, project };
    },
    peek: async (userId, windowStart) => (await entryOf(userId, windowStart)).count,
    flush,
    async close() {
      await timer.stop();
      await flush();
    },
  };
}
