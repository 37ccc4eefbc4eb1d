/** Wakes one sleeper that otherwise polls; see `wakeUp`. */
export interface WakeUp {
  /** Also passed around as a listener: it needs no `this`. */
  wake: () => void;
  /** Forgets earlier wake-ups: called before looking for work, so that only later ones count. */
  reset(): void;
  /** Resolves at a wake-up (or one since `reset`), after `ms`, or when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * A wake-up that is not lost: one that comes while its sleeper is busy (looking for work that the
 * look may have missed) makes the next `sleep` return at once instead of a poll interval later.
 * One sleeper at a time.
 */
export function wakeUp(): WakeUp {
  let woken = false;
  let wakeSleeper: (() => void) | undefined;
  return {
    wake() {
      woken = true;
      wakeSleeper?.();
    },
    reset() {
      woken = false;
    },
    sleep(ms, signal) {
      return new Promise<void>((resolve) => {
        if (woken || signal?.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          wakeSleeper = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done);
        wakeSleeper = done;
      });
    },
  };
}
