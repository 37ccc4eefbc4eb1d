/**
 * Runs tasks one at a time per key, in the order they arrive. The bot holds the lock of a pull
 * request (`owner/repo#12`) while it changes that pull request's check, deployment and comment,
 * so a service webhook that arrives while a preview is still being set up waits for it instead of
 * reading a half-written state and writing an older one over a newer one.
 */
export interface KeyedLock {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

export function createKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      // A failed task must not block the ones queued behind it.
      const result = previous.then(task, task);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
