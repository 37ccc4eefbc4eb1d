import type { Kysely } from 'kysely';
import type { Delivery, ListDeliveriesQuery } from '../../../api/schemas/webhooks.ts';
import type { Database } from '../../platform/store/schema.ts';
import { readPage, type ListPage } from '../../platform/http/pagination.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { requireWebhook } from './require-webhook.ts';
import { toDelivery, type AttemptRow, type DeliveryRow } from './to-webhook.ts';
import { DELIVERY_COLUMNS, DELIVERY_JOB, deliveryRow } from './delivery-job.ts';

/** Attaches each delivery's attempts, oldest first, with one query for the whole page. */
export async function withAttempts(db: Kysely<Database>, rows: DeliveryRow[]): Promise<Delivery[]> {
  if (rows.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('at')
    .orderBy('id')
    .execute();
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
  return rows.map((r) => toDelivery(r, byDelivery.get(r.id) ?? []));
}

/** A webhook's deliveries (its jobs of kind `webhook.deliver`), newest first, each with its attempts (any member). */
export async function listDeliveries(
  deps: Deps,
  actor: Actor,
  projectId: string,
  webhookId: string,
  q: ListDeliveriesQuery,
): Promise<ListPage<Delivery>> {
  const { webhook } = await requireWebhook(deps, actor, projectId, webhookId, 'viewer');
  // One snapshot for the deliveries and their attempts: on PostgreSQL two separate reads could see
  // a delivery still pending beside the attempt that already ended it.
  let read = deps.db.transaction();
  if (deps.store.dialect.name === 'postgres') read = read.setIsolationLevel('repeatable read');
  return read.execute(async (tx) => {
    // Index jobs_subject (kind, subject, created_at, id) gives the page and its order.
    const base = tx.selectFrom('jobs').where('kind', '=', DELIVERY_JOB).where('subject', '=', webhook.id);
    const page = await readPage(base.select(DELIVERY_COLUMNS), base, q, {
      time: 'created_at',
      id: 'id',
      key: (r) => [r.created_at, r.id],
    });
    return { ...page, items: await withAttempts(tx, page.items.map(deliveryRow)) };
  });
}
