import { sql } from 'kysely';
import type { Deps } from '../services/deps.ts';
import { prepared } from '../store/prepared.ts';

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  reset: number;
}

const WINDOW_SECONDS = 3600;

/** Runs on every request: built once per store (see server/store/prepared.ts). */
const increment = prepared<[string, number, number], { count: number }>(
  3,
  (d, userId, windowStart, limit) =>
    d
      .insertInto('rate_limits')
      .values({ user_id: userId, window_start: windowStart as unknown as number, count: 1 })
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'window_start'])
          .doUpdateSet({ count: sql`rate_limits.count + 1` })
          .where('rate_limits.count', '<', limit as unknown as number),
      )
      .returning('count'),
  { frequentWrite: true },
);

/**
 * Counts a request against the user's fixed one-hour window in the database, so every API
 * process sharing it sees one count. Every token of a user draws on the same window (as GitHub
 * counts personal tokens): a new token is not a new allowance. The increment is conditional: a
 * refused request does not count.
 */
export async function consumeRateLimit(deps: Deps, userId: string, limit: number): Promise<RateLimitState> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  const windowStart = nowSec - (nowSec % WINDOW_SECONDS);
  const reset = windowStart + WINDOW_SECONDS;
  const [row] = await deps.store.run(increment, userId, windowStart, limit);
  if (!row) return { allowed: false, limit, remaining: 0, reset };
  return { allowed: true, limit, remaining: Math.max(0, limit - Number(row.count)), reset };
}

/** Drops windows that have ended; run now and then. */
export async function pruneRateLimits(deps: Deps): Promise<void> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  await deps.db
    .deleteFrom('rate_limits')
    .where('window_start', '<', nowSec - (nowSec % WINDOW_SECONDS))
    .execute();
}
