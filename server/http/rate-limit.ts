import { sql } from 'kysely';
import { readProjectWithRole, type ProjectWithRole } from '../services/access.ts';
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

/** Runs on every request on PostgreSQL: built once per store (see server/store/prepared.ts). */
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
 * The same increment, and the project a request names with the caller's role, in one statement:
 * on PostgreSQL a request's first two reads cost one round trip instead of two. (PostgreSQL
 * runs a write inside WITH exactly once, whether or not the query reads its rows; SQLite has no
 * writes inside WITH, and its statements cost no round trip.)
 */
const incrementAndReadProject = prepared<
  [string, number, number, string],
  ProjectWithRole & { rate_count: number | null }
>(
  4,
  (d, userId, windowStart, limit, projectId) => ({
    compile: () =>
      sql<ProjectWithRole & { rate_count: number | null }>`
        with counted as (
          insert into rate_limits (user_id, window_start, count) values (${userId}, ${windowStart}, 1)
          on conflict (user_id, window_start) do update set count = rate_limits.count + 1
          where rate_limits.count < ${limit}
          returning count
        )
        select (select count from counted) as rate_count, p.*, m.role as member_role
        from (select 1) as one
        left join projects p on p.id = ${projectId} and p.deleted_at is null
        left join memberships m on m.organization_id = p.organization_id and m.user_id = ${userId}`.compile(
        d,
      ),
  }),
  { frequentWrite: true },
);

/**
 * Counts a request against the user's fixed one-hour window. On PostgreSQL the count is kept in
 * the database on every request, so every API process sharing it sees one count; on SQLite the
 * one serving process counts in memory and writes behind (server/http/rate-counts.ts). Every
 * token of a user draws on the same window (as GitHub counts personal tokens): a new token is
 * not a new allowance. The increment is conditional: a refused request does not count.
 *
 * With `projectId` (the request's path names a project), that project is read with the caller's
 * role at the same time (PostgreSQL: in the same statement; SQLite: in the same turn's shared
 * work): `project` is the row, or null when there is none.
 */
export async function consumeRateLimit(
  deps: Pick<Deps, 'store' | 'clock' | 'rateCounts'>,
  userId: string,
  limit: number,
  projectId?: string,
): Promise<RateLimitState & { project?: ProjectWithRole | null }> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  const windowStart = nowSec - (nowSec % WINDOW_SECONDS);
  const reset = windowStart + WINDOW_SECONDS;
  // The count after this request; null when the window is full (nothing was counted).
  let count: number | null;
  let read: { project?: ProjectWithRole | null } = {};
  if (deps.rateCounts) {
    // The embedded database: counted in memory (server/http/rate-counts.ts); the project is
    // read meanwhile, with the work this turn of the event loop shares (server/store/prepared.ts).
    const [counted, project] = await Promise.all([
      deps.rateCounts.take(userId, windowStart, limit),
      projectId === undefined ? undefined : readProjectWithRole(deps, userId, projectId),
    ]);
    count = counted;
    if (project !== undefined) read = { project };
  } else if (projectId !== undefined) {
    const [row] = await deps.store.run(incrementAndReadProject, userId, windowStart, limit, projectId);
    const { rate_count, ...project } = row!;
    count = rate_count;
    read = { project: project.id === null ? null : project };
  } else {
    const [row] = await deps.store.run(increment, userId, windowStart, limit);
    count = row ? row.count : null;
  }
  if (count === null) return { allowed: false, limit, remaining: 0, reset, ...read };
  return { allowed: true, limit, remaining: Math.max(0, limit - Number(count)), reset, ...read };
}

/** Drops windows that have ended; run now and then. */
export async function pruneRateLimits(deps: Pick<Deps, 'db' | 'clock'>): Promise<void> {
  const nowSec = Math.floor(deps.clock.now().getTime() / 1000);
  await deps.db
    .deleteFrom('rate_limits')
    .where('window_start', '<', nowSec - (nowSec % WINDOW_SECONDS))
    .execute();
}
