import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Job } from '../../../platform/queue/queue.ts';

/**
 * The GitHub App's events are jobs of this kind in the shared queue (server/platform/queue/queue.ts),
 * claimed through the API by the App's own token only, never by the service's workers.
 */
export const GITHUB_EVENT_JOB = 'github.event';

/** Tries before an event is given up (about 2 hours of backoff in all). */
export const MAX_ATTEMPTS = 10;

/** What an event job carries: the delivery as GitHub sent it. */
export const GitHubEventPayload = z.object({
  deliveryId: z.string(),
  name: z.string(),
  body: z.string(),
  signature: z.string(),
});
export type GitHubEventPayload = z.infer<typeof GitHubEventPayload>;

/**
 * The payload's text, `deliveryId` first: a duplicate's delivery id is then read from the first
 * bytes of its payload (`DELIVERY_PREFIX_CHARS`), not from a body of up to 25 MiB.
 */
export const eventPayload = (p: GitHubEventPayload): GitHubEventPayload => ({
  deliveryId: p.deliveryId,
  name: p.name,
  body: p.body,
  signature: p.signature,
});

/** Enough of a payload's text to hold its `deliveryId` (100 characters, escaped at most 6 times). */
export const DELIVERY_PREFIX_CHARS = 700;

/** The delivery id at the start of a payload's text (see `eventPayload`). */
export function deliveryIdOf(payloadPrefix: string): string {
  const m = /^\{"deliveryId":("(?:[^"\\]|\\.)*")/.exec(payloadPrefix);
  if (!m) throw new Error('a GitHub event job without its delivery id');
  return z.string().parse(JSON.parse(m[1]!));
}

/**
 * The job id of a delivery: the same for the same delivery id in one App's queue, so a delivery
 * stored twice is kept once (the primary key says so, race or not).
 */
export const eventJobId = (ownerUserId: string, deliveryId: string) =>
  `ghe_${createHash('sha256').update(`${ownerUserId}\0${deliveryId}`, 'utf8').digest('hex').slice(0, 20)}`;

/**
 * The dedupe key of an event: GitHub signs only the body, so a captured delivery sent again under
 * a new delivery id verifies; its name and body digest make it a duplicate while the first is kept.
 */
export const eventDedupeKey = (ownerUserId: string, name: string, bodySha256: string) =>
  `${GITHUB_EVENT_JOB}:${ownerUserId}:${name}:${bodySha256}`;

/** Events of one key of one App run one at a time: the key is the App's own, under its user. */
export const eventOrderingKey = (ownerUserId: string, orderingKey: string) => `${ownerUserId}/${orderingKey}`;

/** The API's name for a job's status: a queued event is `pending`. */
export const eventStatus = (status: Job['status']) => (status === 'queued' ? 'pending' : status);
