import type { Kysely } from 'kysely';
import type { Fairness } from '../../platform/queue/fair-claim.ts';
import type { JobQueue } from '../../platform/queue/queue.ts';
import { DELIVERY_JOB, DeliveryJobPayload } from './delivery-job.ts';
import { decodeJson } from '../../core/json-column.ts';
import type { Database } from '../../platform/store/schema.ts';

/** A due delivery this worker now holds, with what is needed to send it. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  event: string;
  /** The body exactly as stored: it is what gets signed and sent. */
  payload: string;
  /** This attempt's number, 1-based (the job's `attempts`, counted at claim). */
  attempt: number;
  /** Who holds the claim (the job's `locked_by`): every write of the outcome requires it. */
  holder: string;
  /** The webhook, or null when its row is gone (deleted while the delivery was pending). */
  webhook: { url: string; secretCiphertext: string; active: boolean } | null;
}

/** How long a claim holds a delivery; well above one attempt's 10 s timeout. */
export const CLAIM_LEASE_MS = 30_000;

/** Every webhook gets the same bound: `perEndpoint` attempts in flight at once, in all processes together. */
export function perWebhook(perEndpoint: number): Fairness {
  return { limits: async (_db, keys) => new Map(keys.map((k) => [k, perEndpoint])) };
}

/**
 * Claims up to `limit` due deliveries for `holder`, in one transaction (`queue.claimMany`). The fair
 * key of a delivery is its webhook, so each one taken serves the webhook with the fewest attempts in flight
 * (then the one served longest ago), skips webhooks at `perEndpoint` (counted across every
 * process, under a live lease) and takes that webhook's oldest due delivery. A delivery waiting
 * for its retry is not due, so it holds back nothing; a receiver that hangs holds only its own
 * webhook's slots. A claim counts the attempt; a worker that dies leaves its claim to run out, and
 * the delivery is claimed again (fair-claim.ts, queue.ts).
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  queue: Pick<JobQueue, 'claimMany'>,
  holder: string,
  limit: number,
  perEndpoint: number,
  leaseMs = CLAIM_LEASE_MS,
): Promise<ClaimedDelivery[]> {
  const jobs = await queue.claimMany([DELIVERY_JOB], holder, leaseMs, limit, perWebhook(perEndpoint));
  if (jobs.length === 0) return [];
  const hooks = await db
    .selectFrom('webhooks')
    .select(['id', 'url', 'secret_ciphertext', 'active'])
    .where('id', 'in', [...new Set(jobs.map((j) => j.fair_key ?? ''))])
    .execute();
  const byId = new Map(hooks.map((h) => [h.id, h]));
  return jobs.map((job) => {
    const p = decodeJson(DeliveryJobPayload, job.payload, `Delivery ${job.id}'s job`);
    const hook = byId.get(job.fair_key ?? '');
    return {
      id: job.id,
      webhookId: job.fair_key ?? '',
      event: p.event,
      payload: p.body,
      attempt: Number(job.attempts),
      holder,
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
export async function releaseClaim(queue: Pick<JobQueue, 'release'>, d: ClaimedDelivery): Promise<void> {
  await queue.release(d.id, d.holder);
}
