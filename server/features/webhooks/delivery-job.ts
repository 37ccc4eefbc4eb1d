import type { Kysely, Selectable } from 'kysely';
import { z } from 'zod';
import { newId } from '../../core/ids.ts';
import { decodeJson } from '../../core/json-column.ts';
import type { JobQueue } from '../../platform/queue/queue.ts';
import type { Database, JobsTable } from '../../platform/store/schema.ts';

/** A webhook delivery is a job of this kind in the shared queue; `queue.notify(DELIVERY_JOB)` wakes the senders. */
export const DELIVERY_JOB = 'webhook.deliver';

/**
 * Attempts a delivery gets (backoff.ts: one first attempt and seven retries). The delivery worker
 * decides the give-up itself; this is what `jobs.max_attempts` says.
 */
const DELIVERY_MAX_ATTEMPTS = 8;

/** A delivery job's payload: the event's name and the body exactly as stored (what gets signed). */
export const DeliveryJobPayload = z.object({ event: z.string(), body: z.string() });
export type DeliveryJobPayload = z.infer<typeof DeliveryJobPayload>;

/** The columns of a delivery job that the deliveries list and redelivery read. */
export const DELIVERY_COLUMNS = [
  'id',
  'subject',
  'payload',
  'status',
  'attempts',
  'run_at',
  'lease_until',
  'created_at',
] as const;

export type DeliveryJobRow = Pick<Selectable<JobsTable>, (typeof DELIVERY_COLUMNS)[number]>;

/** A delivery as the API describes it, read from its job. */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event: string;
  payload: string;
  status: 'pending' | 'success' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
}

/**
 * Open jobs are `pending`: the next attempt is at `run_at`, or when the running attempt's claim
 * ends. Done is `success`, failed is `failed`, without a next attempt.
 */
export function deliveryRow(job: DeliveryJobRow): DeliveryRow {
  const p = decodeJson(DeliveryJobPayload, job.payload, `Delivery ${job.id}'s job`);
  const open = job.status === 'queued' || job.status === 'running';
  return {
    id: job.id,
    webhook_id: job.subject ?? '',
    event: p.event,
    payload: p.body,
    status: open ? 'pending' : job.status === 'done' ? 'success' : 'failed',
    attempt_count: Number(job.attempts),
    next_attempt_at: job.status === 'queued' ? job.run_at : job.status === 'running' ? job.lease_until : null,
    created_at: job.created_at,
  };
}

/**
 * Stores one delivery of `body` to a webhook, due at once: its fair key is the webhook, so the
 * claim keeps each webhook to its limit of attempts in flight (delivery-worker.ts); `subject` lists it.
 */
export async function enqueueDelivery(
  tx: Kysely<Database>,
  queue: Pick<JobQueue, 'enqueue'>,
  webhookId: string,
  event: string,
  body: string,
): Promise<string> {
  return queue.enqueue(tx, DELIVERY_JOB, { event, body } satisfies DeliveryJobPayload, {
    id: newId('whd'),
    fairKey: webhookId,
    subject: webhookId,
    maxAttempts: DELIVERY_MAX_ATTEMPTS,
  });
}
