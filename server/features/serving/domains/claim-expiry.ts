import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Clock } from '../../../core/clock.ts';
import type { Database } from '../../../platform/store/schema.ts';

/**
 * A pending claim lasts `ttlMs` from when it was added (`SLIPWAY_DOMAIN_CLAIM_TTL`, 7 days by
 * default); a verified domain does not expire. Expired claims are gone to the API at once and
 * are deleted by the monitoring run.
 */
export function claimExpiresAt(row: { status: string; created_at: string }, ttlMs: number): string | null {
  return row.status === 'pending' ? new Date(Date.parse(row.created_at) + ttlMs).toISOString() : null;
}

/** `created_at` before this: the pending claim has expired. */
const cutoff = (clock: Clock, ttlMs: number) => new Date(clock.now().getTime() - ttlMs).toISOString();

/** A WHERE for domain rows that are still in force: verified, or pending and not expired. */
export function inForce(clock: Clock, ttlMs: number) {
  const before = cutoff(clock, ttlMs);
  return (eb: ExpressionBuilder<Database, 'domains'>) =>
    eb.or([eb('domains.status', '=', 'verified'), eb('domains.created_at', '>', before)]);
}

/** Deletes pending claims past their expiry; returns how many. */
export async function deleteExpiredClaims(
  db: Kysely<Database>,
  clock: Clock,
  ttlMs: number,
): Promise<number> {
  const res = await db
    .deleteFrom('domains')
    .where('status', '=', 'pending')
    .where('created_at', '<=', cutoff(clock, ttlMs))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
