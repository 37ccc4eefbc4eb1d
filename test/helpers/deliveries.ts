import type { Kysely } from 'kysely';
import {
  DELIVERY_COLUMNS,
  DELIVERY_JOB,
  deliveryRow,
  type DeliveryRow,
} from '../../server/features/webhooks/delivery-job.ts';
import type { Database } from '../../server/platform/store/schema.ts';

/**
 * Webhook deliveries as stored (jobs of kind `webhook.deliver`), oldest first, read the way the
 * deliveries list reads them: `status` pending / success / failed, `attempt_count`,
 * `next_attempt_at`, `payload` the body as sent.
 */
export async function readDeliveries(
  db: Kysely<Database>,
  where: { webhookId?: string; id?: string; event?: string } = {},
): Promise<DeliveryRow[]> {
  let q = db.selectFrom('jobs').select(DELIVERY_COLUMNS).where('kind', '=', DELIVERY_JOB);
  if (where.webhookId !== undefined) q = q.where('subject', '=', where.webhookId);
  if (where.id !== undefined) q = q.where('id', '=', where.id);
  const rows = (await q.orderBy('created_at').orderBy('id').execute()).map(deliveryRow);
  return where.event === undefined ? rows : rows.filter((r) => r.event === where.event);
}
