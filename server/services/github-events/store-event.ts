import type { StoreGitHubEventBody, StoredGitHubEvent } from '../../../api/schemas/github-events.ts';
import { newId } from '../../lib/ids.ts';
import type { Actor, Deps } from '../deps.ts';

/** Keeps a GitHub delivery in the caller's queue; a delivery stored before is kept once. */
export async function storeGitHubEvent(
  deps: Deps,
  actor: Actor,
  body: StoreGitHubEventBody,
): Promise<StoredGitHubEvent> {
  const now = deps.clock.now().toISOString();
  const id = newId('ghe');
  await deps.db
    .insertInto('github_events')
    .values({
      id,
      owner_user_id: actor.userId,
      delivery_id: body.deliveryId,
      name: body.name,
      body: body.body,
      signature: body.signature,
      ordering_key: body.orderingKey,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      received_at: now,
    })
    .onConflict((oc) => oc.columns(['owner_user_id', 'delivery_id']).doNothing())
    .execute();
  const row = await deps.db
    .selectFrom('github_events')
    .select(['id', 'delivery_id', 'status', 'received_at'])
    .where('owner_user_id', '=', actor.userId)
    .where('delivery_id', '=', body.deliveryId)
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    status: row.status,
    duplicate: row.id !== id,
    receivedAt: row.received_at,
  };
}
