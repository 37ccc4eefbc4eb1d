import { describeBytes } from '../../../../core/format.ts';
import type { Budget, SinkState } from './state.ts';

const HOUR = 3_600_000;

export const enqueue = (s: SinkState, deploymentId: string, line: string, at: Date) =>
  s.queue.push({ deployment_id: deploymentId, type: 'runtime', at: at.toISOString(), line });

/** Ends a deployment's hour: one line with what was left out, if anything was. */
function settle(s: SinkState, deploymentId: string, b: Budget, at: Date): void {
  if (b.droppedLines === 0) return;
  const what = b.droppedLines === 1 ? '1 line' : `${b.droppedLines} lines`;
  enqueue(
    s,
    deploymentId,
    `[slipway] ${what} of output (${describeBytes(b.droppedBytes)}) left out in the hour from ${new Date(b.since).toISOString()}: over the ${s.limit} an hour limit (SLIPWAY_RUNTIME_LOG_LIMIT)`,
    at,
  );
}

/** True when the line fits in the deployment's hour; counts it either way. */
export function fits(s: SinkState, deploymentId: string, line: string, at: Date): boolean {
  const t = at.getTime();
  let b = s.budgets.get(deploymentId);
  if (!b || t - b.since >= HOUR) {
    if (b) settle(s, deploymentId, b, at);
    b = { since: t, bytes: 0, cut: false, droppedLines: 0, droppedBytes: 0 };
    s.budgets.set(deploymentId, b);
  }
  const bytes = Buffer.byteLength(line);
  if (!b.cut && b.bytes + bytes <= s.limitBytes) {
    b.bytes += bytes;
    return true;
  }
  b.droppedLines++;
  b.droppedBytes += bytes;
  if (!b.cut) {
    b.cut = true;
    enqueue(
      s,
      deploymentId,
      `[slipway] Runtime log cut at ${s.limit} this hour (SLIPWAY_RUNTIME_LOG_LIMIT): lines until ${new Date(b.since + HOUR).toISOString()} are not stored; the app goes on.`,
      at,
    );
  }
  return false;
}

/** Settles the hours that are over, so the summary does not wait for the app's next line. */
export function settleExpired(s: SinkState, all = false): void {
  const at = s.deps.clock.now();
  for (const [id, b] of s.budgets) {
    if (!all && at.getTime() - b.since < HOUR) continue;
    settle(s, id, b, at);
    s.budgets.delete(id);
  }
}
