import { createHash } from 'node:crypto';
import { ApiError } from '../../../api/errors.ts';
import {
  GITHUB_DELIVERY_MAX_BYTES,
  type StoreGitHubEventBody,
  type StoredGitHubEvent,
} from '../../../api/schemas/github-events.ts';
import { newId } from '../../lib/ids.ts';
import type { Actor, Deps } from '../deps.ts';

/** The 413 of a delivery larger than GitHub sends, naming the limit. */
export const TOO_LARGE_MESSAGE = `A GitHub delivery is at most 25 MiB (${GITHUB_DELIVERY_MAX_BYTES} bytes of UTF-8): GitHub caps webhook payloads at 25 MB`;

/**
 * Keeps a GitHub delivery in the caller's queue (the App's; the route lets no other token in).
 * A delivery stored before is kept once: the same delivery id, or the same event name and body.
 * GitHub signs only the body, so a captured delivery sent again under a new delivery id verifies;
 * its digest makes it a duplicate for as long as the first is kept (GITHUB_EVENT_RETENTION_MS).
 */
export async function storeGitHubEvent(
  deps: Deps,
  actor: Actor,
  body: StoreGitHubEventBody,
): Promise<StoredGitHubEvent> {
  const bytes = Buffer.byteLength(body.body, 'utf8');
  if (bytes > GITHUB_DELIVERY_MAX_BYTES) {
    throw new ApiError(
      'VALIDATION_ERROR',
      `${TOO_LARGE_MESSAGE}; this body is ${bytes} bytes`,
      undefined,
      413,
    );
  }
  const digest = createHash('sha256').update(body.body, 'utf8').digest('hex');
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
      body_sha256: digest,
      signature: body.signature,
      ordering_key: body.orderingKey,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      received_at: now,
    })
    // Either key: (owner, delivery id) or (owner, name, body digest).
    .onConflict((oc) => oc.doNothing())
    .execute();
  const row = await deps.db
    .selectFrom('github_events')
    .select(['id', 'delivery_id', 'status', 'received_at'])
    .where('owner_user_id', '=', actor.userId)
    .where((eb) =>
      eb.or([
        eb('delivery_id', '=', body.deliveryId),
        eb.and([eb('name', '=', body.name), eb('body_sha256', '=', digest)]),
      ]),
    )
    .orderBy('seq')
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    status: row.status,
    duplicate: row.id !== id,
    receivedAt: row.received_at,
  };
}
