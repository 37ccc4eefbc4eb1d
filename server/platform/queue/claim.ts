import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { nowIso, type QueueContext } from './context.ts';
import {
  lockOwner,
  NO_KEY,
  readTurns,
  runningOf,
  turnOrder,
  type Fairness,
  type Turn,
} from './fair-claim.ts';
import { LEASE_EXPIRED, OPEN, type ClaimScope, type Job } from './types.ts';

/**
 * Open jobs of `kinds` that may be claimed at `at`, oldest due first: of those with an ordering
 * key, only the oldest open job of its key (so one runs at a time, in order).
 */
function runnable(tx: Kysely<Database>, kinds: string[], at: string, scope: ClaimScope = {}) {
  let query = tx
    .selectFrom('jobs')
    .selectAll()
    .where(OPEN)
    .where('kind', 'in', kinds)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', at)]),
        eb.and([eb('status', '=', 'running'), eb('lease_until', '<', at)]),
      ]),
    )
    .where((eb) =>
      eb.or([
        eb('jobs.ordering_key', 'is', null),
        eb.not(
          eb.exists(
            eb
              .selectFrom('jobs as older')
              .select(sql.lit(1).as('one'))
              .whereRef('older.ordering_key', '=', 'jobs.ordering_key')
              .where(sql<boolean>`older.status in ('queued', 'running')`)
              .whereRef('older.seq', '<', 'jobs.seq'),
          ),
        ),
      ]),
    );
  if (scope.ownerUserId === undefined) return query.orderBy('run_at');
  // Jobs stored in the same millisecond (a burst of the App's events) keep their order too; the
  // index jobs_open_user (owner_user_id, kind, run_at, seq) gives both.
  query = query.where('owner_user_id', '=', scope.ownerUserId);
  return query.orderBy('run_at').orderBy('seq');
}

/** Leases the first job `query` finds to `workerId`, or returns null. */
async function take(
  q: QueueContext,
  tx: Kysely<Database>,
  query: ReturnType<typeof runnable>,
  at: string,
  leaseUntil: string,
  workerId: string,
): Promise<Job | null> {
  let first = query.limit(1);
  if (q.dialect.name === 'postgres') first = first.modifyEnd(sql`for update skip locked`);
  const job = await first.executeTakeFirst();
  if (!job) return null;
  // A running job here is one whose worker stopped renewing its lease: say so, since the
  // interrupted attempt could not record anything itself.
  const lastError =
    job.status === 'running'
      ? `${LEASE_EXPIRED}: ${job.locked_by ?? 'a worker'} held it until ${job.lease_until ?? 'unknown'}`
      : job.last_error;
  // The condition is repeated so that two claimers can never both win (SQLite has no SKIP LOCKED).
  const res = await tx
    .updateTable('jobs')
    .set({
      status: 'running',
      attempts: job.attempts + 1,
      lease_until: leaseUntil,
      locked_by: workerId,
      last_error: lastError,
      claimed_at: at,
      updated_at: at,
    })
    .where('id', '=', job.id)
    .where('attempts', '=', job.attempts)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return null;
  return {
    ...job,
    last_error: lastError,
    status: 'running' as const,
    attempts: job.attempts + 1,
    lease_until: leaseUntil,
    locked_by: workerId,
    claimed_at: at,
  };
}

export async function claimMany(
  q: QueueContext,
  kinds: string[],
  workerId: string,
  leaseMs: number,
  limit: number,
  fairness?: Fairness,
  scope?: ClaimScope,
): Promise<Job[]> {
  if (kinds.length === 0 || limit <= 0) return [];
  const at = nowIso(q);
  const leaseUntil = new Date(q.clock.now().getTime() + leaseMs).toISOString();
  return q.db.transaction().execute(async (tx) => {
    const jobs: Job[] = [];
    const next = fairness
      ? fairTaker(q, tx, kinds, at, leaseUntil, workerId, await readTurns(tx, kinds, at, fairness), scope)
      : () => take(q, tx, runnable(tx, kinds, at, scope), at, leaseUntil, workerId);
    while (jobs.length < limit) {
      const job = await next();
      if (!job) break;
      jobs.push(job);
    }
    return jobs;
  });
}

/**
 * Takes the next job by the owners' turns, again on each call: an owner served moves back
 * (one more running, served now), an owner with nothing left to take drops out.
 */
function fairTaker(
  q: QueueContext,
  tx: Kysely<Database>,
  kinds: string[],
  at: string,
  leaseUntil: string,
  workerId: string,
  turns: Turn[],
  scope?: ClaimScope,
): () => Promise<Job | null> {
  const locked = new Set<string>();
  return async () => {
    for (const key of turnOrder(turns)) {
      const turn = turns.find((t) => t.key === key)!;
      if (!locked.has(key)) {
        await lockOwner(tx, q.dialect, key);
        locked.add(key);
      }
      // Another process may have started one of the owner's jobs since the turns were read.
      if (turn.limit !== null && (await runningOf(tx, kinds, key, at)) >= turn.limit) {
        turns.splice(turns.indexOf(turn), 1);
        continue;
      }
      const mine = runnable(tx, kinds, at, scope).where((eb) =>
        key === NO_KEY ? eb('fair_key', 'is', null) : eb('fair_key', '=', key),
      );
      const job = await take(q, tx, mine, at, leaseUntil, workerId);
      if (job) {
        turn.running += 1;
        turn.lastClaimedAt = at;
        return job;
      }
      turns.splice(turns.indexOf(turn), 1);
    }
    return null;
  };
}
