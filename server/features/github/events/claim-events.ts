import { randomBytes } from 'node:crypto';
import type { ClaimedGitHubEvent } from '../../../../api/schemas/github-events.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { decodeJson } from '../../../core/json-column.ts';
import { GITHUB_EVENT_JOB, GitHubEventPayload } from './event-job.ts';

/**
 * Claims up to `limit` of the caller's events that are due, through the shared queue: an event's
 * ordering key holds the later events of its pull request while an older one is open, so they run
 * one at a time in the order they came. A claim lasts `leaseMs`; an event whose claim ran out (its
 * worker died) is due again, and that claim counts as a try. The claim's token is its holder in
 * the queue (`locked_by`): finishing needs it back.
 */
export async function claimGitHubEvents(
  deps: Deps,
  actor: Actor,
  q: { limit: number; leaseMs: number },
): Promise<ClaimedGitHubEvent[]> {
  const claimed: ClaimedGitHubEvent[] = [];
  while (claimed.length < q.limit) {
    const lease = randomBytes(12).toString('base64url');
    const job = await deps.queue.claim([GITHUB_EVENT_JOB], lease, q.leaseMs, undefined, {
      ownerUserId: actor.userId,
    });
    if (!job) break;
    if (job.attempts > job.max_attempts) {
      // Claimed and never finished that many times: the App dies on it. Give it up.
      await deps.queue.fail(
        job.id,
        lease,
        `given up: claimed ${job.attempts - 1} times without finishing (the App stopped while running it)`,
        null,
      );
      continue;
    }
    const p = decodeJson(GitHubEventPayload, job.payload, `GitHub event ${job.id}'s payload`);
    claimed.push({
      id: job.id,
      deliveryId: p.deliveryId,
      name: p.name,
      body: p.body,
      signature: p.signature,
      // The queue counts this claim; the App is told the tries before it.
      attempts: job.attempts - 1,
      lease,
    });
  }
  return claimed;
}
