import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import type { Database } from '../store/schema.ts';

/** A due delivery this worker now holds, with what is needed to send it. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  event: string;
  /** The body exactly as stored: it is what gets signed and sent. */
  payload: string;
  /** This attempt's number, 1-based; it is also the claim's token (see `claimDueDeliveries`). */
  attempt: number;
  /** The webhook, or null when its row is gone (deleted while the delivery was pending). */
  webhook: { url: string; secretCiphertext: string; active: boolean } | null;
}

/** How long a claim holds a delivery; well above one attempt's 10 s timeout. */
export const CLAIM_LEASE_MS = 30_000;

/** How many deliveries to one endpoint this worker may hold, and how many it holds now. */
export interface EndpointAllowance {
  perEndpoint: number;
  /** Attempts in flight in this worker, by webhook id. */
  inFlight: ReadonlyMap<string, number>;
}

/**
 * Claims up to `limit` due pending deliveries, oldest due first, without a jobs row, and at most
 * `allowance.perEndpoint` in flight per webhook: a receiver with a backlog (or one that hangs)
 * cannot take every slot, and the others' deliveries are found past its backlog, not behind it.
 *
 * The candidates are the oldest due rows of each webhook (a window function, in SQLite and
 * PostgreSQL alike); the claim is then one conditional UPDATE that moves `next_attempt_at` a lease
 * ahead and counts the attempt; its WHERE repeats "pending and due", which the row no longer is
 * once another worker claimed it. SQLite runs the statement alone, and PostgreSQL re-checks that
 * WHERE against a row a concurrent claim changed, so of several workers (or processes) only one
 * gets each delivery. A worker that dies holding a claim leaves the row pending; it is due again
 * when the lease ends, so deliveries survive crashes and restarts. Counting the attempt at claim
 * time bounds how often a delivery that kills its worker can come back.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  clock: Clock,
  limit: number,
  allowance: EndpointAllowance = { perEndpoint: limit, inFlight: new Map() },
  leaseMs = CLAIM_LEASE_MS,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const now = clock.now();
  const nowIso = now.toISOString();
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  const full = [...allowance.inFlight].filter(([, n]) => n >= allowance.perEndpoint).map(([id]) => id);
  const candidates = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select((w) => [
          'id',
          'webhook_id',
          'next_attempt_at',
          w.fn
            .agg<number>('row_number')
            .over((o) => o.partitionBy('webhook_id').orderBy('next_attempt_at').orderBy('id'))
            .as('place'),
        ])
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', nowIso)
        .$if(full.length > 0, (q) => q.where('webhook_id', 'not in', full))
        .as('due'),
    )
    .select(['id', 'webhook_id'])
    .where('place', '<=', allowance.perEndpoint)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit + allowance.inFlight.size * allowance.perEndpoint)
    .execute();
  const taking = new Map(allowance.inFlight);
  const ids: string[] = [];
  for (const c of candidates) {
    if (ids.length === limit) break;
    const held = taking.get(c.webhook_id) ?? 0;
    if (held >= allowance.perEndpoint) continue;
    taking.set(c.webhook_id, held + 1);
    ids.push(c.id);
  }
  if (ids.length === 0) return [];
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      next_attempt_at: leaseUntil,
      attempt_count: eb('attempt_count', '+', 1),
      updated_at: nowIso,
    }))
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', nowIso)
    .returning(['id', 'webhook_id', 'event', 'payload', 'attempt_count'])
    .execute();
  if (claimed.length === 0) return [];

  const hooks = await db
    .selectFrom('webhooks')
    .select(['id', 'url', 'secret_ciphertext', 'active'])
    .where('id', 'in', [...new Set(claimed.map((c) => c.webhook_id))])
    .execute();
  const byId = new Map(hooks.map((h) => [h.id, h]));
  return claimed.map((row) => {
    const hook = byId.get(row.webhook_id);
    return {
      id: row.id,
      webhookId: row.webhook_id,
      event: row.event,
      payload: row.payload,
      attempt: Number(row.attempt_count),
      webhook: hook
        ? { url: hook.url, secretCiphertext: hook.secret_ciphertext, active: Number(hook.active) === 1 }
        : null,
    };
  });
}

/**
 * Gives a claim back (the worker is stopping mid-attempt): due again at once, and the attempt
 * that never finished is not counted.
 */
export async function releaseClaim(db: Kysely<Database>, clock: Clock, d: ClaimedDelivery): Promise<void> {
  const now = clock.now().toISOString();
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: now, attempt_count: d.attempt - 1, updated_at: now })
    .where('id', '=', d.id)
    .where('status', '=', 'pending')
    .where('attempt_count', '=', d.attempt)
    .execute();
}
