import type { Kysely } from 'kysely';
import { WebhookEvent } from '../../../api/schemas/webhooks.ts';
import { enqueueDelivery } from './delivery-job.ts';
import type { Database } from '../../platform/store/schema.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { decodeJson } from '../../core/json-column.ts';
import { z } from 'zod';

/**
 * Records an event for every active webhook of the project subscribed to it: one job of kind
 * `webhook.deliver` each (delivery-job.ts). Call it with the
 * transaction that makes the change: the delivery exists exactly when the change does.
 * Returns how many deliveries were written; call `deps.queue.notify(DELIVERY_JOB)` (delivery-job.ts) after commit
 * when it is more than zero.
 */
export async function recordEvent(
  tx: Kysely<Database>,
  deps: Pick<Deps, 'clock' | 'queue'>,
  projectId: string,
  event: WebhookEvent,
  data: Record<string, unknown>,
): Promise<number> {
  const hooks = await tx
    .selectFrom('webhooks')
    .select(['id', 'events'])
    .where('project_id', '=', projectId)
    .where('active', '=', 1)
    .execute();
  const subscribed = hooks.filter((h) =>
    decodeJson(z.array(WebhookEvent), h.events, `Webhook ${h.id}'s events`).includes(event),
  );
  if (subscribed.length === 0) return 0;
  const payload = JSON.stringify({ event, timestamp: deps.clock.now().toISOString(), data });
  for (const h of subscribed) await enqueueDelivery(tx, deps.queue, h.id, event, payload);
  return subscribed.length;
}
