import type { ProjectWithRole } from '../deps/project-with-role.ts';
import type { Deps } from '../deps/deps.ts';

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  reset: number;
}

const WINDOW_SECONDS = 3600;

/**
 * Counts a request against the user's fixed one-hour window, through the process's counts
 * (server/platform/deps/rate-counts/rate-counts.ts: in memory and written behind on SQLite, in the database before
 * the answer on PostgreSQL). Every token of a user draws on the same window (as GitHub counts
 * personal tokens): a new token is not a new allowance. A refused request does not count.
 *
 * With `projectId` (the request's path names a project), that project is read with the caller's
 * role at the same time: `project` is the row, or null when there is none.
 */
export async function consumeRateLimit(
  deps: Pick<Deps, 'clock' | 'rateCounts'>,
  userId: string,
  limit: number,
  projectId?: string,
): Promise<RateLimitState & { project?: ProjectWithRole | null }> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  const windowStart = nowSec - (nowSec % WINDOW_SECONDS);
  const reset = windowStart + WINDOW_SECONDS;
  const { count, ...read } = await deps.rateCounts.take(userId, windowStart, limit, projectId);
  if (count === null) return { allowed: false, limit, remaining: 0, reset, ...read };
  return { allowed: true, limit, remaining: Math.max(0, limit - count), reset, ...read };
}

/** The caller's window as it stands, counting nothing: what a request an upload grant took reports. */
export async function peekRateLimit(
  deps: Pick<Deps, 'clock' | 'rateCounts'>,
  userId: string,
  limit: number,
): Promise<RateLimitState> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  const windowStart = nowSec - (nowSec % WINDOW_SECONDS);
  const count = await deps.rateCounts.peek(userId, windowStart);
  return { allowed: true, limit, remaining: Math.max(0, limit - count), reset: windowStart + WINDOW_SECONDS };
}

/** Drops windows that have ended; run now and then. */
export async function pruneRateLimits(deps: Pick<Deps, 'db' | 'clock'>): Promise<void> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  await deps.db
    .deleteFrom('rate_limits')
    .where('window_start', '<', nowSec - (nowSec % WINDOW_SECONDS))
    .execute();
}
