import { sinkOf } from './runtime-log/sink-of.ts';
import {
  createSinkState,
  type RuntimeLogDeps,
  type RuntimeLogOptions,
  type RuntimeLogSink,
} from './runtime-log/state.ts';
import { startFlushing } from './runtime-log/write.ts';

export type { RuntimeLogSink } from './runtime-log/state.ts';

/**
 * Batches server apps' output into deployment_logs (type `runtime`), one insert per batch every
 * `flushMs`: an app logging per request would otherwise cost a write per line.
 *
 * Each deployment stores at most `limitBytes` of output per hour (SLIPWAY_RUNTIME_LOG_LIMIT):
 * an app printing in a loop would otherwise grow the shared database by megabytes a second.
 * Past it, lines are dropped until the hour is over, and the log says so when it is cut and how
 * much was left out when the hour ends. The supervisor's own lines (starts, crashes, stops) are
 * few and always kept. The count is per edge process: each edge runs its own copy of an app.
 *
 * Its parts, in runtime-log/: state.ts (the queue and each deployment's hour), sink-of.ts (a
 * line), budget.ts (the hourly limit), write.ts (the batched writes and their timer).
 */
export function createRuntimeLogSink(deps: RuntimeLogDeps, opts: RuntimeLogOptions = {}): RuntimeLogSink {
  const s = createSinkState(deps, opts);
  return sinkOf(s, startFlushing(s));
}
