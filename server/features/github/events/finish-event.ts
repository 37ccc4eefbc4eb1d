import { sql } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { GITHUB_EVENT_JOB, MAX_ATTEMPTS } from './event-job.ts';

export { MAX_ATTEMPTS } from './event-job.ts';

/** 2 s, 4 s, 8 s ... at most 30 minutes between tries. */
export const retryDelayMs = (attempts: number) => Math.min(30 * 60_000, 1000 * 2 ** attempts);

/**
 * Ends a claim: `done`; `retry` (later, with backoff, or given up as `failed` after the last try);
 * `release` (handed back untried, at once: the worker is stopping). Needs the claim's lease (the
 * job's holder in the queue), so a worker whose claim ran out and was taken over cannot finish
 * someone else's try.
 */
export async function finishGitHubEvent(
  deps: Deps,
  actor: Actor,
  id: string,
  body: { lease: string; outcome: 'done' | 'retry' | 'release'; error?: string | undefined },
): Promise<{ status: 'pending' | 'done' | 'failed'; attempts: number; nextAttemptAt: string | null }> {
  const row = await deps.db
    .selectFrom('jobs')
    .select(['status', 'locked_by', 'attempts'])
    .where('id', '=', id)
    .where('kind', '=', GITHUB_EVENT_JOB)
    .where('owner_user_id', '=', actor.userId)
    .executeTakeFirst();
  if (!row) throw ApiError.notFound(`GitHub event ${id}`);
  const held = () =>
    ApiError.conflict(`GitHub event ${id} is not held by this claim (it ran out, or the event was finished)`);
  if (row.status !== 'running' || row.locked_by !== body.lease) throw held();
  const now = deps.clock.now();
  // The queue counted the claim as a try; a release hands it back untried.
  const attempts = Number(row.attempts) - (body.outcome === 'release' ? 1 : 0);
  const error = body.error ?? 'failed (no reason given)';
  let result: { status: 'pending' | 'done' | 'failed'; nextAttemptAt: string | null };
  let ok: boolean;
  if (body.outcome === 'done') {
    ok = await deps.queue.complete(id, body.lease);
    result = { status: 'done', nextAttemptAt: null };
  } else if (body.outcome === 'release') {
    ok = await deps.queue.release(id, body.lease);
    result = { status: 'pending', nextAttemptAt: now.toISOString() };
  } else if (attempts >= MAX_ATTEMPTS) {
    ok = await deps.queue.fail(id, body.lease, error, null);
    result = { status: 'failed', nextAttemptAt: null };
  } else {
    const next = new Date(now.getTime() + retryDelayMs(attempts));
    ok = await deps.queue.fail(id, body.lease, error, next);
    result = { status: 'pending', nextAttemptAt: next.toISOString() };
  }
  // Taken over between the read and the write.
  if (!ok) throw held();
  return { ...result, attempts };
}

/**
 * How long the queue keeps an event: a finished one this long after it finished, one never
 * finished (pending, or claimed by a bot that went away) this long after it was received; then it
 * is deleted. It is also how long a replay of the same event (name and body) is recognised. Event
 * jobs keep to this, not to SLIPWAY_JOB_RETENTION (server/schedule/prune-jobs.ts leaves them alone).
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
    .deleteFrom('jobs')
    .where(sql<boolean>`status in ('done', 'failed')`)
    .where('kind', '=', GITHUB_EVENT_JOB)
    .where('updated_at', '<', before)
    .executeTakeFirst();
  const expired = await deps.db
    .deleteFrom('jobs')
    .where(sql<boolean>`status in ('queued', 'running')`)
    .where('kind', '=', GITHUB_EVENT_JOB)
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(finished.numDeletedRows) + Number(expired.numDeletedRows);
}
