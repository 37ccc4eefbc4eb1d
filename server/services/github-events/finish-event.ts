import { ApiError } from '../../../api/errors.ts';
import type { Actor, Deps } from '../deps.ts';

/** Tries before an event is given up (about 2 hours of backoff in all). */
export const MAX_ATTEMPTS = 10;

/** 2 s, 4 s, 8 s ... at most 30 minutes between tries. */
export const retryDelayMs = (attempts: number) => Math.min(30 * 60_000, 1000 * 2 ** attempts);

/**
 * Ends a claim: `done`; `retry` (later, with backoff, or given up as `failed` after the last try);
 * `release` (handed back untried, at once: the worker is stopping). Needs the claim's lease, so a
 * worker whose claim ran out and was taken over cannot finish someone else's try.
 */
export async function finishGitHubEvent(
  deps: Deps,
  actor: Actor,
  id: string,
  body: { lease: string; outcome: 'done' | 'retry' | 'release'; error?: string | undefined },
): Promise<{ status: 'pending' | 'done' | 'failed'; attempts: number; nextAttemptAt: string | null }> {
  const row = await deps.db
    .selectFrom('github_events')
    .select(['status', 'lease', 'attempts'])
    .where('id', '=', id)
    .where('owner_user_id', '=', actor.userId)
    .executeTakeFirst();
  if (!row) throw ApiError.notFound(`GitHub event ${id}`);
  if (row.status !== 'running' || row.lease !== body.lease) {
    throw ApiError.conflict(
      `GitHub event ${id} is not held by this claim (it ran out, or the event was finished)`,
    );
  }
  const now = deps.clock.now();
  const attempts = Number(row.attempts) + (body.outcome === 'release' ? 0 : 1);
  const next =
    body.outcome === 'done'
      ? { status: 'done' as const, finished_at: now.toISOString(), next: null }
      : body.outcome === 'release'
        ? { status: 'pending' as const, finished_at: null, next: now.toISOString() }
        : attempts >= MAX_ATTEMPTS
          ? { status: 'failed' as const, finished_at: now.toISOString(), next: null }
          : {
              status: 'pending' as const,
              finished_at: null,
              next: new Date(now.getTime() + retryDelayMs(attempts)).toISOString(),
            };
  await deps.db
    .updateTable('github_events')
    .set({
      status: next.status,
      attempts,
      lease: null,
      lease_until: null,
      finished_at: next.finished_at,
      ...(next.next ? { next_attempt_at: next.next } : {}),
      ...(body.error !== undefined ? { last_error: body.error } : {}),
    })
    .where('id', '=', id)
    .where('lease', '=', body.lease)
    .execute();
  return { status: next.status, attempts, nextAttemptAt: next.next };
}

/**
 * How long the queue keeps an event: a finished one this long after it finished, one never
 * finished (pending, or claimed by a bot that went away) this long after it was received; then it
 * is deleted. It is also how long a replay of the same event (name and body) is recognised.
 */
export const GITHUB_EVENT_RETENTION_MS = 7 * 24 * 3_600_000;
/** Finished GitHub events are kept a week, to look into what the App did; then deleted. */
export const FINISHED_EVENT_RETENTION_MS = GITHUB_EVENT_RETENTION_MS;

/**
 * Deletes events past their retention (the monitoring run calls this): finished ones a week after
 * they finished, and pending or running ones a week after they were received: an event nobody
 * took in a week (its bot is gone) expires instead of filling the database.
 */
export async function pruneGitHubEvents(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - GITHUB_EVENT_RETENTION_MS).toISOString();
  const finished = await deps.db
    .deleteFrom('github_events')
    .where('finished_at', '<', before)
    .executeTakeFirst();
  const expired = await deps.db
    .deleteFrom('github_events')
    .where('status', 'in', ['pending', 'running'])
    .where('received_at', '<', before)
    .executeTakeFirst();
  return Number(finished.numDeletedRows) + Number(expired.numDeletedRows);
}
