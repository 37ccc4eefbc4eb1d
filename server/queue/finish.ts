import { sql } from 'kysely';
import { nowIso, type QueueContext } from './context.ts';

/*
 * The end of a claim. Each acts only while `workerId` still holds the running job, and says
 * whether it did: a worker whose lease ran out changes nothing of the job's next holder.
 */

/** Moves a held lease `leaseMs` ahead: false when `workerId` no longer holds the job. */
export async function extend(
  q: QueueContext,
  jobId: string,
  workerId: string,
  leaseMs: number,
): Promise<boolean> {
  const res = await q.db
    .updateTable('jobs')
    .set({
      lease_until: new Date(q.clock.now().getTime() + leaseMs).toISOString(),
      updated_at: nowIso(q),
    })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** The job ran: done. */
export async function complete(q: QueueContext, jobId: string, workerId: string): Promise<boolean> {
  const res = await q.db
    .updateTable('jobs')
    .set({ status: 'done', lease_until: null, updated_at: nowIso(q) })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Gives the job back: retried at `retryAt`, or failed for good when null. */
export async function fail(
  q: QueueContext,
  jobId: string,
  workerId: string,
  error: string,
  retryAt: Date | null,
): Promise<boolean> {
  const res = await q.db
    .updateTable('jobs')
    .set({
      status: retryAt ? 'queued' : 'failed',
      run_at: retryAt ? retryAt.toISOString() : nowIso(q),
      lease_until: null,
      locked_by: null,
      last_error: error.slice(0, 4000),
      updated_at: nowIso(q),
    })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Hands a claimed job back so another worker can take it at once; the claim's attempt is not counted. */
export async function release(q: QueueContext, jobId: string, workerId: string): Promise<boolean> {
  const res = await q.db
    .updateTable('jobs')
    .set({
      status: 'queued',
      attempts: sql`attempts - 1`,
      lease_until: null,
      locked_by: null,
      updated_at: nowIso(q),
    })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
