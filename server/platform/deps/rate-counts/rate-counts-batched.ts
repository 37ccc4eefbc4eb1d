import { sql } from 'kysely';
import type { ProjectWithRole } from '../project-with-role.ts';
import type { Store } from '../../store/db.ts';
import { prepared } from '../../store/prepared.ts';
import type { Counted, RateCounts } from './rate-counts.ts';
import { readRateCount } from './rate-counts-memory.ts';

/**
 * The rate-limit counts on PostgreSQL, which several API processes share: every request is
 * counted in the database before it is answered, so all processes see one count, exactly.
 *
 * The count is a write, and its statement costs the database more than the reads around it.
 * So the requests that arrive while a count is on its way wait for it to come back and are
 * then counted together, by one statement: each user's requests of the batch raise that user's
 * count once, as far as the limit allows, and the statement says how many it granted; it reads
 * the project each request names, with the caller's role, in the same round trip. A request
 * alone (a quiet server) goes at the end of the turn it arrived in, as its own batch: the same
 * one round trip as before, and under load far fewer statements than requests.
 */

/** Statements on their way at once: one more batch gathers while one is answered. */
const IN_FLIGHT = 2;

interface Waiting {
  userId: string;
  windowStart: number;
  limit: number;
  projectId: string | null;
  resolve: (counted: Counted) => void;
  reject: (err: unknown) => void;
}

type Row = ProjectWithRole & { rate_count: number | null; rate_granted: number | null };

/**
 * One batch: `req_*` one entry per user, window and project asked for (in order), `grp_*` one
 * per user and window with how many requests it has and its limit. A user's count rises by as
 * many as fit under the limit (`granted`, worked out in the SET list from the row as it was:
 * PostgreSQL has no OLD in RETURNING before version 18); a window already full is left alone (a
 * refused request does not count). Each row carries its user's count and grant, and its project.
 */
const countAndRead = prepared<
  [string[], number[], (string | null)[], string[], number[], number[], number[]],
  Row
>(
  7,
  (d, reqUsers, reqWindows, reqProjects, grpUsers, grpWindows, grpCounts, grpLimits) => ({
    compile: () =>
      sql<Row>`
        with req as (
          select * from unnest(${reqUsers}::text[], ${reqWindows}::bigint[], ${reqProjects}::text[])
            with ordinality as r(user_id, window_start, project_id, idx)
        ),
        grp as (
          select * from unnest(${grpUsers}::text[], ${grpWindows}::bigint[], ${grpCounts}::int[], ${grpLimits}::int[])
            as g(user_id, window_start, n, lim)
        ),
        counted as (
          insert into rate_limits (user_id, window_start, count, granted)
          select user_id, window_start, least(n, lim), least(n, lim) from grp where lim > 0
          -- One order everywhere: two statements at once (this process's or another's) lock
          -- the users' rows in the same order, and wait for each other instead of deadlocking.
          order by user_id, window_start
          on conflict (user_id, window_start) do update
          set (count, granted) = (
            select least(rate_limits.count + g.n, g.lim), least(rate_limits.count + g.n, g.lim) - rate_limits.count
            from grp g where g.user_id = excluded.user_id and g.window_start = excluded.window_start
          )
          where rate_limits.count < (
            select g.lim from grp g where g.user_id = excluded.user_id and g.window_start = excluded.window_start
          )
          returning user_id, window_start, count, granted
        )
        select c.count as rate_count, c.granted as rate_granted, p.*, m.role as member_role
        from req r
        left join counted c on c.user_id = r.user_id and c.window_start = r.window_start
        left join projects p on p.id = r.project_id and p.deleted_at is null
        left join memberships m on m.organization_id = p.organization_id and m.user_id = r.user_id
        order by r.idx`.compile(d),
  }),
  { frequentWrite: true },
);

export { countAndRead as batchedCountStatement };

export function createBatchedRateCounts(store: Pick<Store, 'run'>): RateCounts {
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  const settled: (() => void)[] = [];

  const send = () => {
    scheduled = false;
    while (inFlight < IN_FLIGHT && waiting.length > 0) {
      const { batch, later } = takeBatch(waiting);
      waiting = later;
      inFlight++;
      void run(store, batch).finally(() => {
        inFlight--;
        if (waiting.length > 0) send();
        else if (inFlight === 0) for (const done of settled.splice(0)) done();
      });
    }
  };

  const flush = (): Promise<void> =>
    waiting.length === 0 && inFlight === 0 ? Promise.resolve() : new Promise((r) => settled.push(r));

  return {
    take: (userId, windowStart, limit, projectId) =>
      new Promise((resolve, reject) => {
        waiting.push({ userId, windowStart, limit, projectId: projectId ?? null, resolve, reject });
        if (scheduled || inFlight >= IN_FLIGHT) return;
        scheduled = true;
        // After the I/O of this turn: every request that arrived in it joins the batch.
        setImmediate(send);
      }),
    peek: async (userId, windowStart) => {
      const [row] = await store.run(readRateCount, userId, windowStart);
      return Number(row?.count ?? 0);
    },
    flush,
    close: flush,
  };
}

/**
 * The waiting requests a batch can take: all but those of a user whose earlier request in the
 * batch has another limit (two tokens of different plans at once), which wait for the next one;
 * one user's window is counted once per statement.
 */
function takeBatch(waiting: Waiting[]): { batch: Waiting[]; later: Waiting[] } {
  const limits = new Map<string, number>();
  const batch: Waiting[] = [];
  const later: Waiting[] = [];
  for (const w of waiting) {
    const key = `${w.windowStart}:${w.userId}`;
    const limit = limits.get(key);
    if (limit === undefined) limits.set(key, w.limit);
    (limit === undefined || limit === w.limit ? batch : later).push(w);
  }
  return { batch, later };
}

async function run(store: Pick<Store, 'run'>, batch: Waiting[]): Promise<void> {
  const groups = new Map<string, { userId: string; windowStart: number; limit: number; n: number }>();
  for (const w of batch) {
    const key = `${w.windowStart}:${w.userId}`;
    const group = groups.get(key);
    if (group) group.n++;
    else groups.set(key, { userId: w.userId, windowStart: w.windowStart, limit: w.limit, n: 1 });
  }
  const grp = [...groups.values()];
  // One row per user, window and project: the requests of one caller for one project (a client's
  // burst) share a row, which the driver parses once.
  const slots = new Map<string, number>();
  const req = { users: [] as string[], windows: [] as number[], projects: [] as (string | null)[] };
  const slotOf = batch.map((w) => {
    const key = `${w.windowStart}:${w.userId}:${w.projectId ?? ''}`;
    let slot = slots.get(key);
    if (slot === undefined) {
      slot = req.users.length;
      slots.set(key, slot);
      req.users.push(w.userId);
      req.windows.push(w.windowStart);
      req.projects.push(w.projectId);
    }
    return slot;
  });
  let rows: Row[];
  try {
    rows = await store.run(
      countAndRead,
      req.users,
      req.windows,
      req.projects,
      grp.map((g) => g.userId),
      grp.map((g) => g.windowStart),
      grp.map((g) => g.n),
      grp.map((g) => g.limit),
    );
  } catch (err) {
    for (const w of batch) w.reject(err);
    return;
  }
  // Within a user's window, the first requests of the batch get what was granted, in order.
  const given = new Map<string, number>();
  batch.forEach((w, i) => {
    const { rate_count, rate_granted, ...project } = rows[slotOf[i]!]!;
    const key = `${w.windowStart}:${w.userId}`;
    const nth = given.get(key) ?? 0;
    given.set(key, nth + 1);
    const granted = rate_granted ?? 0;
    const count = rate_count !== null && nth < granted ? rate_count - granted + 1 + nth : null;
    if (w.projectId === null) w.resolve({ count });
    else w.resolve({ count, project: project.id === null ? null : project });
  });
}
