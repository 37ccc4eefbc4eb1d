import { ApiError } from '../../../api/errors.ts';
import type { LogStreamEnd, LogType } from '../../../api/schemas/deployments.ts';
import { wakeUp } from '../../core/wake-up.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { onDeploymentActivity } from './deployment-activity.ts';
import { linesAfter, tailLines, type LogLine } from './deployment-logs.ts';
import { requireDeployment } from './find-deployment.ts';

/** How a log stream behaves; the defaults are what the API uses, tests shorten them. */
export interface FollowOptions {
  /** Which log to follow. */
  type: LogType;
  /** Lines of history sent first. */
  tail: number;
  /** Resume after this line id (the `id:` of an event, sent back as `Last-Event-ID`) instead of `tail`. */
  afterId?: number | undefined;
  /** Fallback poll of the database, for lines written by other processes. */
  pollMs?: number;
  /**
   * Asked every `accessCheckMs` whether the reader may still read: null, or why not (the member
   * was removed, the token revoked), which ends the stream.
   */
  checkAccess?: () => Promise<string | null>;
  accessCheckMs?: number;
}

/** What a log follower sees: new lines, then the end or why it may read no more. */
export type LogEvent =
  | { type: 'lines'; lines: LogLine[] }
  | { type: 'end'; end: LogStreamEnd }
  | { type: 'refused'; reason: string };

const BATCH = 1000;
const FINAL = new Set(['live', 'failed']);

/** `Last-Event-ID` as a line id, when it is one. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value && /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/**
 * A deployment's log as it grows: the last `tail` lines, then every new line as it is appended,
 * then its final state once the deployment is live or failed. It wakes on appends in this
 * process, polls for the others, and stops when `signal` aborts (the reader went away). How the
 * events are written (SSE frames) is the route's business.
 */
export async function* logEvents(
  deps: Pick<Deps, 'db' | 'store'>,
  deploymentId: string,
  opts: FollowOptions,
  signal: AbortSignal,
): AsyncGenerator<LogEvent> {
  const pollMs = opts.pollMs ?? 250;
  const accessCheckMs = opts.accessCheckMs ?? 5_000;
  let accessCheckedAt = Date.now();
  // A wake-up that came while a batch was being read counts: the next rest returns at once.
  const activity = wakeUp();
  const unsubscribe = onDeploymentActivity(deps, deploymentId, activity.wake);
  try {
    let lastId = opts.afterId ?? 0;
    if (opts.afterId === undefined) {
      const history = await tailLines(deps, deploymentId, opts.type, opts.tail);
      if (history.length) yield { type: 'lines', lines: history };
      lastId = history.at(-1)?.id ?? 0;
    }
    while (!signal.aborted) {
      activity.reset();
      // The state is read before the lines: every line written before the deployment ended is
      // then already visible, so the last batch below is complete when the state is final.
      const state = await deps.db
        .selectFrom('deployments')
        .innerJoin('projects', 'projects.id', 'deployments.project_id')
        .select(['deployments.status', 'deployments.error_message', 'projects.deleted_at'])
        .where('deployments.id', '=', deploymentId)
        .executeTakeFirst();
      const lines = await linesAfter(deps, deploymentId, opts.type, lastId, BATCH);
      if (lines.length) yield { type: 'lines', lines };
      lastId = lines.at(-1)?.id ?? lastId;
      if (lines.length === BATCH) continue;
      if (state && FINAL.has(state.status)) {
        yield { type: 'end', end: { status: state.status, errorMessage: state.error_message } };
        return;
      }
      // A deleted project's deployment never finishes: close without claiming a final state.
      if (!state || state.deleted_at !== null) return;
      await activity.sleep(pollMs, signal);
      if (opts.checkAccess && Date.now() - accessCheckedAt >= accessCheckMs) {
        accessCheckedAt = Date.now();
        const refusal = await opts.checkAccess();
        if (refusal) {
          yield { type: 'refused', reason: refusal };
          return;
        }
      }
    }
  } finally {
    unsubscribe();
  }
}

/**
 * `GET /deployments/<id>/logs?follow=true`: checks access while errors can still be answered
 * normally, then gives the events to stream, ending when the reader loses access.
 */
export async function followLogs(
  deps: Deps,
  actor: Actor,
  deploymentId: string,
  q: { type: LogType; tail: number; afterId?: number | undefined },
): Promise<(signal: AbortSignal) => AsyncGenerator<LogEvent>> {
  const { deployment } = await requireDeployment(deps, actor, deploymentId, 'viewer');
  return (signal) =>
    logEvents(
      deps,
      deployment.id,
      { ...q, checkAccess: () => stillAllowed(deps, actor, deployment.id) },
      signal,
    );
}

/**
 * Whether a reader may go on reading, asked of the database itself (not the token cache), so a
 * revocation or a removal made by any process ends the streams of every process.
 */
async function stillAllowed(deps: Deps, actor: Actor, deploymentId: string): Promise<string | null> {
  const token = await deps.db
    .selectFrom('tokens')
    .select('id')
    .where('id', '=', actor.tokenId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!token) return 'the token was revoked';
  try {
    await requireDeployment(deps, actor, deploymentId, 'viewer');
    return null;
  } catch (err) {
    if (err instanceof ApiError) return 'no longer a member of the organization';
    throw err;
  }
}
