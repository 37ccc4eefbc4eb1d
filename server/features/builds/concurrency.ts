export interface Semaphore {
  /** Waits for a free slot; the returned function gives it back (calling it twice is harmless). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Runs `fn` in a slot. */
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Slots in use. */
  readonly active: number;
  /** Callers waiting for a slot. */
  readonly waiting: number;
}

/**
 * Limits how many builds run at once in this worker (SLIPWAY_BUILD_CONCURRENCY): each build
 * spawns a package manager and a bundler, which a small machine cannot run many of at once.
 * Waiters are served first come, first served.
 */
export function createSemaphore(limit: number): Semaphore {
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error(`Concurrency must be a positive whole number, got ${limit}`);
  let active = 0;
  const queue: { grant: () => void }[] = [];

  const release = () => {
    const next = queue.shift();
    if (next) next.grant();
    else active--;
  };
  const oneShot = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };

  const acquire = (signal?: AbortSignal): Promise<() => void> => {
    if (signal?.aborted)
      return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('Aborted'));
    if (active < limit) {
      active++;
      return Promise.resolve(oneShot());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        // The slot passes straight from the releaser to this waiter: `active` is unchanged.
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(oneShot());
        },
      };
      const onAbort = () => {
        const i = queue.indexOf(waiter);
        if (i !== -1) queue.splice(i, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('Aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
    });
  };

  return {
    acquire,
    async run(fn, signal) {
      const done = await acquire(signal);
      try {
        return await fn();
      } finally {
        done();
      }
    },
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
  };
}
