import type { Clock } from './clock.ts';

/** The part of a logger `every` reports a run's error to (pino's `Logger` is one). */
export interface WarnLog {
  warn(obj: object, msg: string): void;
}

/** Where the error of a run goes: a logger, warned under the loop's `name`, or a function. */
export type EveryErrors = { log: WarnLog; name: string } | { onError: (err: unknown) => void };

export type EveryOptions = EveryErrors & {
  /**
   * Whose time the interval counts. A clock with `repeat` (a fake clock in tests) drives the
   * runs itself; otherwise, and by default, the process's timers do.
   */
  clock?: Clock;
  /** Whether the timer lets the process exit (default true: background work never holds it up). */
  unref?: boolean;
};

export interface Every {
  /** Ends the interval and waits for the run under way, if any. Idempotent; never rejects. */
  stop(): Promise<void>;
}

/** The longest interval Node's timers take (a longer one would fire after 1 ms). */
const MAX_MS = 2 ** 31 - 1;

/**
 * The one way to run in-process background work: calls `fn` every `ms` (first after `ms`, not at
 * once). Runs never overlap: a tick that comes while the previous run of an async `fn` is still
 * under way is skipped, not queued, so a slow run is followed by one run at the next tick, never
 * by a burst that catches up. A run's error (thrown or rejected) goes to the logger or `onError`
 * and the interval goes on; it is never an unhandled rejection.
 *
 * `fn` may end the interval itself with `void handle.stop()` (not awaited: stop waits for the run,
 * which is the caller).
 */
export function every(ms: number, fn: () => unknown, opts: EveryOptions): Every {
  if (!(ms > 0 && ms <= MAX_MS))
    throw new RangeError(`every: the interval must be 1 to ${MAX_MS} ms, not ${ms}`);
  let stopped = false;
  let running: Promise<void> | null = null;
  const report = (err: unknown) => {
    try {
      if ('onError' in opts) opts.onError(err);
      else opts.log.warn({ err, task: opts.name }, `${opts.name} failed`);
    } catch {
      // A reporter that throws must not stop the interval or reject anywhere.
    }
  };
  const tick = () => {
    if (stopped || running) return;
    let result: unknown;
    try {
      result = fn();
    } catch (err) {
      report(err);
      return;
    }
    if (!isThenable(result)) return;
    running = Promise.resolve(result).then(
      () => {
        running = null;
      },
      (err: unknown) => {
        running = null;
        report(err);
      },
    );
  };
  const cancel = opts.clock?.repeat
    ? opts.clock.repeat(ms, tick)
    : processTimer(ms, tick, opts.unref ?? true);
  return {
    async stop() {
      if (!stopped) {
        stopped = true;
        cancel();
      }
      await running;
    },
  };
}

function processTimer(ms: number, tick: () => void, unref: boolean): () => void {
  const timer = setInterval(tick, ms);
  if (unref) timer.unref();
  return () => clearInterval(timer);
}

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
