import { every } from '../../../core/every.ts';
import type { Store } from '../../store/db.ts';
import { peek, take } from './memory/count.ts';
import { flush } from './memory/flush.ts';
import { createMemoryCountsState } from './memory/state.ts';
import type { RateCounts } from './rate-counts.ts';

export { readRateCount } from './memory/queries.ts';

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
// Its parts, each over one MemoryCountsState: memory/state.ts, memory/count.ts (take, peek),
// memory/flush.ts (the writes behind) and memory/queries.ts.

export function createMemoryRateCounts(
  store: Pick<Store, 'run'>,
  opts: { intervalMs?: number; onError?: (err: unknown) => void } = {},
): RateCounts {
  const st = createMemoryCountsState(store);
  const timer = every(opts.intervalMs ?? 1000, () => flush(st), { onError: (err) => opts.onError?.(err) });
  return {
    take: (userId, windowStart, limit, projectId) => take(st, userId, windowStart, limit, projectId),
    peek: (userId, windowStart) => peek(st, userId, windowStart),
    flush: () => flush(st),
    async close() {
      await timer.stop();
      await flush(st);
    },
  };
}
