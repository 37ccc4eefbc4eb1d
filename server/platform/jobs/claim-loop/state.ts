import { wakeUp, type WakeUp } from '../../../core/wake-up.ts';
import type { Deps } from '../../deps/deps.ts';
import type { Lane } from './types.ts';

/** One lane's loop: its runs, its wake-up and who waits for it to be idle. */
export interface LaneState<T extends { id: string }> {
  lane: Lane<T>;
  wake: WakeUp;
  runs: Map<T, { abort: AbortController; done: Promise<void> }>;
  /** Claim rounds so far, for `idle`. */
  round: number;
  idlers: { after: number; resolve: () => void }[];
}

/**
 * What one claim loop keeps (startClaimLoop makes it once), passed to the functions that claim,
 * run and stop rather than closed over.
 */
export interface ClaimLoopState<T extends { id: string }> {
  deps: Pick<Deps, 'log' | 'queue'>;
  opts: { pollMs: number; windDownMs: number };
  /** False once stop() is called. */
  running: boolean;
  /** Every lane, by name. */
  states: Map<string, LaneState<T>>;
  all: LaneState<T>[];
  /** Wakes a lane by name. */
  wake: (name: string) => void;
  /** Stops listening to `queue.notify`. */
  unsubscribe: () => void;
  /** The lanes' loops, once started. */
  loops: Promise<void>[];
  stopping: Promise<void> | undefined;
}

/** The loop's state, listening to `queue.notify` already. */
export function createClaimLoopState<T extends { id: string }>(
  deps: Pick<Deps, 'log' | 'queue'>,
  lanes: Lane<T>[],
  opts: { pollMs: number; windDownMs: number },
): ClaimLoopState<T> {
  const states = new Map<string, LaneState<T>>(
    lanes.map((lane) => [lane.name, { lane, wake: wakeUp(), runs: new Map(), round: 0, idlers: [] }]),
  );
  const wake = (name: string) => states.get(name)?.wake.wake();
  const unsubscribe = deps.queue.onNotify(wake);
  return {
    deps,
    opts,
    running: true,
    states,
    all: [...states.values()],
    wake,
    unsubscribe,
    loops: [],
    stopping: undefined,
  };
}
