import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import {
  GITHUB_DELIVERY_MAX_BYTES,
  type StoreGitHubEventBody,
  type StoredGitHubEvent,
} from '../../../../api/schemas/github-events.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import {
  DELIVERY_PREFIX_CHARS,
  deliveryIdOf,
  eventDedupeKey,
  eventJobId,
  eventOrderingKey,
  eventPayload,
  eventStatus,
  GITHUB_EVENT_JOB,
  MAX_ATTEMPTS,
} from './event-job.ts';

/** The 413 of a delivery larger than GitHub sends, naming the limit. */
export const TOO_LARGE_MESSAGE = `A GitHub delivery is at most 25 MiB (${GITHUB_DELIVERY_MAX_BYTES} bytes of UTF-8): GitHub caps webhook payloads at 25 MB`;

/**
 * Keeps a GitHub delivery in the caller's queue (the App's; the route lets no other token in), as
 * a job of kind `github.event` owned by the caller. A delivery stored before is kept once: the same
 * delivery id (the job's id derives from it), or the same event name and body (its dedupe key).
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
  const id = eventJobId(actor.userId, body.deliveryId);
  const kept = await deps.queue.enqueueOnce(deps.db, GITHUB_EVENT_JOB, eventPayload(body), {
    id,
    dedupeKey: eventDedupeKey(actor.userId, body.name, digest),
    orderingKey: eventOrderingKey(actor.userId, body.orderingKey),
    ownerUserId: actor.userId,
    maxAttempts: MAX_ATTEMPTS,
  });
  const row = await deps.db
    .selectFrom('jobs')
    .select([
      'status',
      'created_at',
      sql<string>`substr(payload, 1, ${sql.lit(DELIVERY_PREFIX_CHARS)})`.as('head'),
    ])
    .where('id', '=', kept.id)
    .executeTakeFirstOrThrow();
  return {
    id: kept.id,
    deliveryId: deliveryIdOf(row.head),
    status: eventStatus(row.status),
    duplicate: kept.duplicate,
    receivedAt: row.created_at,
  };
}
