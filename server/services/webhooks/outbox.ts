import type { Kysely } from 'kysely';
import { WebhookEvent } from '../../../api/schemas/webhooks.ts';
import { newId } from '../../lib/ids.ts';
import type { Database } from '../../store/schema.ts';
import type { Deps } from '../deps.ts';
import { decodeJson } from '../../lib/json-column.ts';
import { z } from 'zod';

export const DELIVERY_JOB = 'webhook.deliver';

/**
 * Records an event for every active webhook of the project subscribed to it. Call it with the
 * transaction that makes the change: the delivery exists exactly when the change does.
 * Returns how many deliveries were written; call `deps.queue.notify(DELIVERY_JOB)` after commit
 * when it is more than zero.
 */
export async function recordEvent(
  tx: Kysely<Database>,
  deps: Pick<Deps, 'clock'>,
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
  const now = deps.clock.now().toISOString();
  const payload = JSON.stringify({ event, timestamp: now, data });
  await tx
    .insertInto('webhook_deliveries')
    .values(
      subscribed.map((h) => ({
        id: newId('whd'),
        webhook_id: h.id,
        event,
        payload,
        status: 'pending' as const,
        attempt_count: 0,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  return subscribed.length;
}
