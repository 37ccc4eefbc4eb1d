import type { Actor, Deps } from '../deps.ts';
import { requireWebhook } from './require-webhook.ts';

/**
 * Removes a webhook with its deliveries and their attempts (developer and up). Pending
 * deliveries go too, so nothing is sent to the URL afterwards; a delivery already in flight
 * finds its row gone and is dropped by the worker.
 */
export async function deleteWebhook(
  deps: Deps,
  actor: Actor,
  projectId: string,
  webhookId: string,
): Promise<void> {
  const { webhook } = await requireWebhook(deps, actor, projectId, webhookId, 'developer');
  await deps.db.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('webhook_attempts')
      .where('delivery_id', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('webhook_deliveries.id')
          .where('webhook_deliveries.webhook_id', '=', webhook.id),
      )
      .execute();
    await tx.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhook.id).execute();
    await tx.deleteFrom('webhooks').where('id', '=', webhook.id).execute();
  });
}
