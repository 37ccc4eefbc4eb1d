import type { DeploymentLogs, LogType } from '../../../api/schemas/deployments.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { signalDeployment } from './deployment-activity.ts';
import { requireDeployment } from './find-deployment.ts';

/** One stored log line; `id` orders lines and lets a follower resume after one. */
export interface LogLine {
  id: number;
  line: string;
}

/**
 * Appends lines to one of a deployment's logs and wakes the followers in this process. A string
 * holding several lines is stored as several rows, so `tail` and streaming count real lines.
 */
export async function appendLog(
  deps: Pick<Deps, 'db' | 'clock' | 'store'>,
  deploymentId: string,
  type: LogType,
  lines: string[],
): Promise<void> {
  // A trailing newline ends the line rather than starting an empty one.
  const rows = lines.flatMap((l) => l.replace(/\r?\n$/, '').split(/\r?\n/));
  if (rows.length === 0) return;
  const at = deps.clock.now().toISOString();
  await deps.db
    .insertInto('deployment_logs')
    .values(rows.map((line) => ({ deployment_id: deploymentId, type, at, line })))
    .execute();
  signalDeployment(deps, deploymentId);
}

/** The last `tail` lines of one log, oldest first. */
export async function tailLines(
  deps: Pick<Deps, 'db'>,
  deploymentId: string,
  type: LogType,
  tail: number,
): Promise<LogLine[]> {
  const rows = await deps.db
    .selectFrom('deployment_logs')
    .select(['id', 'line'])
    .where('deployment_id', '=', deploymentId)
    .where('type', '=', type)
    .orderBy('id', 'desc')
    .limit(tail)
    .execute();
  // PostgreSQL returns bigserial ids as strings.
  return rows.reverse().map((r) => ({ id: Number(r.id), line: r.line }));
}

/**
 * Lines appended after line `afterId`, oldest first, at most `limit` of them. Followers rely on
 * ids becoming visible in order, which holds because one builder writes a deployment's log at
 * a time: on PostgreSQL, ids of concurrent inserts can commit out of order.
 */
export async function linesAfter(
  deps: Pick<Deps, 'db'>,
  deploymentId: string,
  type: LogType,
  afterId: number,
  limit: number,
): Promise<LogLine[]> {
  const rows = await deps.db
    .selectFrom('deployment_logs')
    .select(['id', 'line'])
    .where('deployment_id', '=', deploymentId)
    .where('type', '=', type)
    .where('id', '>', afterId)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), line: r.line }));
}

/** `GET /deployments/<id>/logs` without `follow`: the tail as one newline-separated string. */
export async function readLogs(
  deps: Deps,
  actor: Actor,
  deploymentId: string,
  q: { type: LogType; tail: number },
): Promise<DeploymentLogs> {
  const { deployment } = await requireDeployment(deps, actor, deploymentId, 'viewer');
  const lines = await tailLines(deps, deployment.id, q.type, q.tail);
  return { logs: lines.map((l) => l.line).join('\n'), type: q.type };
}
