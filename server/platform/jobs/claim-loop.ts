import type { Deps } from '../deps/deps.ts';
import { idle, loop } from './claim-loop/loop.ts';
import { createClaimLoopState } from './claim-loop/state.ts';
import { stop } from './claim-loop/stop.ts';
import type { ClaimLoop, Lane } from './claim-loop/types.ts';

export { Stopped, type ClaimLoop, type Lane } from './claim-loop/types.ts';

// The loop's parts, each over one ClaimLoopState: claim-loop/state.ts, loop.ts (claim rounds,
// idle), run.ts (a job's run and its lease) and stop.ts.

/**
 * Runs each lane's loop: claim up to the lane's room, start what was claimed, then sleep until a
 * wake-up (`queue.notify` of the lane's name, a job of the lane ending) or `pollMs`, the fallback
 * for work of other processes and for retries coming due. A wake-up during a claim is kept (see
 * wake-up.ts), so work enqueued while a claim missed it is not left for the poll.
 */
export function startClaimLoop<T extends { id: string }>(
  deps: Pick<Deps, 'log' | 'queue'>,
  lanes: Lane<T>[],
  /** `windDownMs`: how long runs aborted on stop may take to end before their jobs are released anyway. */
  opts: { pollMs: number; windDownMs: number },
): ClaimLoop {
  const st = createClaimLoopState(deps, lanes, opts);
  st.loops = st.all.map((s) => loop(st, s));
  return {
    stop: (graceMs = 10_000) => (st.stopping ??= stop(st, graceMs)),
    idle: () => idle(st),
    wake: st.wake,
  };
}
