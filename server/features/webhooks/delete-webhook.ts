import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../platform/store/schema.ts';
import { DELIVERY_JOB } from './delivery-job.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { requireWebhook } from './require-webhook.ts';

/**
 * Removes a webhook with its deliveries and their attempts (developer and up). Pending
 * deliveries go too, so nothing is sent to the URL afterwards; a delivery already in flight
 * finds its row gone and is dropped by the worker. The deliveries are the
 * webhook's jobs of kind `webhook.deliver` (subject: the webhook).
 */
export async function deleteWebhook(
  deps: Deps,
  actor: Actor,
  projectId: string,
  webhookId: string,
): Promise<void> {
  const { webhook } = await requireWebhook(deps, actor, projectId, webhookId, 'developer');
  await deps.db.transaction().execute(async (tx) => {
    const deliveries = (eb: ExpressionBuilder<Database, 'jobs'>) =>
      eb.and([eb('kind', '=', DELIVERY_JOB), eb('subject', '=', webhook.id)]);
    await tx
      .deleteFrom('webhook_attempts')
      .where('delivery_id', 'in', (eb) => eb.selectFrom('jobs').select('jobs.id').where(deliveries))
      .execute();
    await tx.deleteFrom('jobs').where(deliveries).execute();
    await tx.deleteFrom('webhooks').where('id', '=', webhook.id).execute();
  });
}
