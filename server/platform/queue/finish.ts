import { sql, type UpdateObject } from 'kysely';
import type { Database } from '../store/schema.ts';
import { nowIso, type QueueContext } from './context.ts';

/*
 * The end of a claim. Each acts only while `workerId` still holds the running job, and says
 * whether it did: a worker whose lease ran out changes nothing of the job's next holder.
 */

/** Writes `set` to the job if `workerId` still holds it running; true when it did. */
async function whileHeld(
  q: QueueContext,
  jobId: string,
  workerId: string,
  set: UpdateObject<Database, 'jobs'>,
): Promise<boolean> {
  const res = await q.db
    .updateTable('jobs')
    .set({ ...set, updated_at: nowIso(q) })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Moves a held lease `leaseMs` ahead: false when `workerId` no longer holds the job. */
export function extend(q: QueueContext, jobId: string, workerId: string, leaseMs: number): Promise<boolean> {
  return whileHeld(q, jobId, workerId, {
    lease_until: new Date(q.clock.now().getTime() + leaseMs).toISOString(),
  });
}

/** The job ran: done. */
export function complete(q: QueueContext, jobId: string, workerId: string): Promise<boolean> {
  return whileHeld(q, jobId, workerId, { status: 'done', lease_until: null });
}

/** Gives the job back: retried at `retryAt`, or failed for good when null. */
export function fail(
  q: QueueContext,
  jobId: string,
  workerId: string,
  error: string,
  retryAt: Date | null,
): Promise<boolean> {
  return whileHeld(q, jobId, workerId, {
    status: retryAt ? 'queued' : 'failed',
    run_at: retryAt ? retryAt.toISOString() : nowIso(q),
    lease_until: null,
    locked_by: null,
    last_error: error.slice(0, 4000),
  });
}

/** Hands a claimed job back so another worker can take it at once; the claim's attempt is not counted. */
export function release(q: QueueContext, jobId: string, workerId: string): Promise<boolean> {
  return whileHeld(q, jobId, workerId, {
    status: 'queued',
    attempts: sql<number>`attempts - 1`,
    lease_until: null,
    locked_by: null,
  });
}
