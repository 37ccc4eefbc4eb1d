import { ApiError } from '../../../api/errors.ts';
import { type Delivery, WebhookPayload } from '../../../api/schemas/webhooks.ts';
import { DELIVERY_COLUMNS, DELIVERY_JOB, deliveryRow, enqueueDelivery } from './delivery-job.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { requireWebhook } from './require-webhook.ts';
import { toDelivery } from './to-webhook.ts';
import { decodeJson } from '../../core/json-column.ts';

/**
 * Sends a delivery again as a new delivery (developer and up): a new id, so receivers that drop
 * ids they have seen accept it, and the same event and data with a fresh `timestamp`, because
 * receivers reject a timestamp more than 5 minutes old and a redelivery is usually later than that.
 */
export async function redeliver(
  deps: Deps,
  actor: Actor,
  projectId: string,
  webhookId: string,
  deliveryId: string,
): Promise<Delivery> {
  const { webhook } = await requireWebhook(deps, actor, projectId, webhookId, 'developer');
  const job = await deps.db
    .selectFrom('jobs')
    .select(DELIVERY_COLUMNS)
    .where('id', '=', deliveryId)
    .where('kind', '=', DELIVERY_JOB)
    .where('subject', '=', webhook.id)
    .executeTakeFirst();
  const original = job && deliveryRow(job);
  if (!original) throw ApiError.notFound(`Delivery ${deliveryId}`);
  if (webhook.active !== 1) {
    throw ApiError.conflict(
      `Webhook ${webhook.id} is inactive because its receiver answered 410 Gone; register the URL again to receive deliveries`,
    );
  }
  const before = decodeJson(WebhookPayload, original.payload, `Delivery ${original.id}'s payload`);
  const payload = JSON.stringify({
    event: before.event,
    timestamp: deps.clock.now().toISOString(),
    data: before.data,
  });
  const id = await enqueueDelivery(deps.db, deps.queue, webhook.id, original.event, payload);
  const stored = await deps.db
    .selectFrom('jobs')
    .select(DELIVERY_COLUMNS)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  deps.queue.notify(DELIVERY_JOB);
  return toDelivery(deliveryRow(stored), []);
}
