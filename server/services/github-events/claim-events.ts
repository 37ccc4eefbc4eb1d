import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { ClaimedGitHubEvent } from '../../../api/schemas/github-events.ts';
import type { Actor, Deps } from '../deps.ts';

/**
 * Claims up to `limit` of the caller's events that are due, at most one per ordering key and
 * only the oldest open event of its key, so the events of one pull request run one at a time in
 * the order they came. A claim lasts `leaseMs`; an event whose claim ran out (its worker died) is
 * due again.
 */
export async function claimGitHubEvents(
  deps: Deps,
  actor: Actor,
  q: { limit: number; leaseMs: number },
): Promise<ClaimedGitHubEvent[]> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const candidates = await deps.db
    .selectFrom('github_events as e')
    .select(['e.id', 'e.delivery_id', 'e.name', 'e.body', 'e.signature', 'e.attempts', 'e.status', 'e.lease'])
    .where('e.owner_user_id', '=', actor.userId)
    .where('e.status', 'in', ['pending', 'running'])
    .where((eb) =>
      eb.or([
        eb.and([eb('e.status', '=', 'pending'), eb('e.next_attempt_at', '<=', nowIso)]),
        eb.and([eb('e.status', '=', 'running'), eb('e.lease_until', '<', nowIso)]),
      ]),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('github_events as o')
            .select(sql.lit(1).as('one'))
            .whereRef('o.owner_user_id', '=', 'e.owner_user_id')
            .whereRef('o.ordering_key', '=', 'e.ordering_key')
            .where('o.status', 'in', ['pending', 'running'])
            .whereRef('o.seq', '<', 'e.seq'),
        ),
      ),
    )
    .orderBy('e.seq')
    .limit(q.limit)
    .execute();
  const leaseUntil = new Date(now.getTime() + q.leaseMs).toISOString();
  const claimed: ClaimedGitHubEvent[] = [];
  for (const c of candidates) {
    const lease = randomBytes(12).toString('base64url');
    // Only if nobody claimed it since it was read: another worker may be claiming too.
    let update = deps.db
      .updateTable('github_events')
      .set({ status: 'running', lease, lease_until: leaseUntil })
      .where('id', '=', c.id)
      .where('status', '=', c.status);
    update = c.lease === null ? update.where('lease', 'is', null) : update.where('lease', '=', c.lease);
    const r = await update.executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) continue;
    claimed.push({
      id: c.id,
      deliveryId: c.delivery_id,
      name: c.name,
      body: c.body,
      signature: c.signature,
      attempts: Number(c.attempts),
      lease,
    });
  }
  return claimed;
}
