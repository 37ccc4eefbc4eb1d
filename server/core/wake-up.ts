/** See `wakeUp`. */
export type WakeUp = ReturnType<typeof wakeUp>;

/**
 * Wakes one sleeper that otherwise polls, without losing a wake-up that comes while the sleeper is
 * busy (looking for work that the look may have missed): the next `sleep` then returns at once.
 * One sleeper at a time.
 */
export function wakeUp() {
  let woken = false;
  let wakeSleeper: (() => void) | undefined;
  return {
    /** A plain function: also passed around as a listener. */
    wake: () => {
      woken = true;
      wakeSleeper?.();
    },
    /** Forgets earlier wake-ups: called before looking for work, so that only later ones count. */
    reset: () => void (woken = false),
    /** Resolves at a wake-up (or one since `reset`), after `ms`, or when `signal` aborts. */
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve) => {
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
      }),
  };
}
