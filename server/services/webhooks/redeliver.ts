import { ApiError } from '../../../api/errors.ts';
import { type Delivery, WebhookPayload } from '../../../api/schemas/webhooks.ts';
import { newId } from '../../lib/ids.ts';
import { DELIVERY_JOB } from './outbox.ts';
import type { Actor, Deps } from '../deps.ts';
import { requireWebhook } from './require-webhook.ts';
import { toDelivery } from './to-webhook.ts';
import { decodeJson } from '../../lib/json-column.ts';

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
  const original = await deps.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('webhook_id', '=', webhook.id)
    .executeTakeFirst();
  if (!original) throw ApiError.notFound(`Delivery ${deliveryId}`);
  if (webhook.active !== 1) {
    throw ApiError.conflict(
      `Webhook ${webhook.id} is inactive because its receiver answered 410 Gone; register the URL again to receive deliveries`,
    );
  }
  const now = deps.clock.now().toISOString();
  const before = decodeJson(WebhookPayload, original.payload, `Delivery ${original.id}'s payload`);
  const row = {
    id: newId('whd'),
    webhook_id: webhook.id,
    event: original.event,
    payload: JSON.stringify({ event: before.event, timestamp: now, data: before.data }),
    status: 'pending' as const,
    attempt_count: 0,
    next_attempt_at: now,
    created_at: now,
    updated_at: now,
  };
  await deps.db.insertInto('webhook_deliveries').values(row).execute();
  deps.queue.notify(DELIVERY_JOB);
  return toDelivery(row, []);
}
