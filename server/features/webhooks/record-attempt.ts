import type { Kysely } from 'kysely';
import { isDatabaseUnavailable } from '../../platform/http/errors.ts';
import type { Clock } from '../../core/clock.ts';
import type { Database } from '../../platform/store/schema.ts';
import { retryDelayMs } from './backoff.ts';
import type { ClaimedDelivery } from './delivery-claims.ts';

/** What one attempt came to. */
export type AttemptOutcome =
  /** The receiver answered 2xx. */
  | { kind: 'delivered'; statusCode: number }
  /** The receiver answered 410 Gone: the webhook is deactivated and the delivery fails. */
  | { kind: 'gone'; statusCode: 410 }
  /** Any other answer or no answer; `final` fails the delivery at once instead of retrying. */
  | { kind: 'failed'; statusCode: number | null; error: string | null; final?: boolean };

export interface AttemptRecord {
  /** When the attempt started. */
  at: string;
  durationMs: number;
  outcome: AttemptOutcome;
}

/**
 * Writes an attempt and the delivery's next state in one transaction: success, failed (410, a
 * final refusal or retries exhausted) or pending with the next retry's time. The update only
 * applies while this worker's claim holds (the attempt count it claimed with); when the delivery
 * was deleted meanwhile nothing is written. Returns the delivery's new status, or null when the
 * claim no longer held.
 */
export async function recordAttempt(
  db: Kysely<Database>,
  clock: Clock,
  d: ClaimedDelivery,
  record: AttemptRecord,
  random: () => number = Math.random,
): Promise<'success' | 'failed' | 'pending' | null> {
  const { outcome } = record;
  const now = clock.now();
  const retryIn = outcome.kind === 'failed' && !outcome.final ? retryDelayMs(d.attempt, random) : null;
  const status = outcome.kind === 'delivered' ? 'success' : retryIn === null ? 'failed' : 'pending';
  const nextAttemptAt = retryIn === null ? null : new Date(now.getTime() + retryIn).toISOString();

  // The receiver already has this attempt: losing its record to a database blip would send the
  // delivery again, so the write is retried until the database is back (within the claim's lease).
  const started = Date.now();
  for (let wait = 250; ; wait = Math.min(wait * 2, 4000)) {
    try {
      return await writeAttempt(db, d, record, status, nextAttemptAt, now);
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() - started > 20_000) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

function writeAttempt(
  db: Kysely<Database>,
  d: ClaimedDelivery,
  record: AttemptRecord,
  status: 'success' | 'failed' | 'pending',
  nextAttemptAt: string | null,
  now: Date,
): Promise<'success' | 'failed' | 'pending' | null> {
  const { outcome } = record;
  return db.transaction().execute(async (tx) => {
    // The delivery's job: waiting for its retry (run_at is the next attempt), done, or failed.
    const res = await tx
      .updateTable('jobs')
      .set({
        status: status === 'success' ? 'done' : status === 'pending' ? 'queued' : 'failed',
        run_at: nextAttemptAt ?? now.toISOString(),
        lease_until: null,
        locked_by: null,
        last_error: outcome.kind === 'failed' && outcome.error !== null ? outcome.error.slice(0, 2000) : null,
        updated_at: now.toISOString(),
      })
      .where('id', '=', d.id)
      .where('status', '=', 'running')
      .where('locked_by', '=', d.holder)
      .where('attempts', '=', d.attempt)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    await tx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: d.id,
        at: record.at,
        status_code: outcome.statusCode,
        duration_ms: Math.max(0, Math.round(record.durationMs)),
        error: outcome.kind === 'failed' && outcome.error !== null ? outcome.error.slice(0, 2000) : null,
      })
      .execute();
    if (outcome.kind === 'gone') {
      await tx
        .updateTable('webhooks')
        .set({ active: 0, updated_at: now.toISOString() })
        .where('id', '=', d.webhookId)
        .execute();
    }
    return status;
  });
}

/**
 * Ends a delivery that must not be sent: its webhook was deactivated (410 Gone) before its turn.
 * The reason goes into the attempt log, where the deliveries list shows it.
 */
export function skipDelivery(db: Kysely<Database>, clock: Clock, d: ClaimedDelivery, reason: string) {
  return recordAttempt(db, clock, d, {
    at: clock.now().toISOString(),
    durationMs: 0,
    outcome: { kind: 'failed', statusCode: null, error: reason, final: true },
  });
}

/** Removes a delivery whose webhook row is gone; nobody can list it any more. */
export async function dropOrphan(db: Kysely<Database>, d: ClaimedDelivery): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('webhook_attempts').where('delivery_id', '=', d.id).execute();
    await tx.deleteFrom('jobs').where('id', '=', d.id).execute();
  });
}
