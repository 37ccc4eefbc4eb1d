import type { Logger } from 'pino';

/**
 * Work the bot does after it has answered an HTTP request (the service receiver acknowledges a
 * delivery first and updates GitHub afterwards). Failures are logged, never thrown: nobody is
 * left to catch them. `idle()` lets tests and shutdown wait for the work in flight.
 */
export interface Tasks {
  start(name: string, work: () => Promise<void>): void;
  /** Resolves once no task is running, including tasks started while waiting. */
  idle(): Promise<void>;
}

export function createTasks(log: Pick<Logger, 'error'>): Tasks {
  const running = new Set<Promise<void>>();
  return {
    start(name, work) {
      const p: Promise<void> = Promise.resolve()
        .then(work)
        .catch((err: unknown) => log.error({ err, task: name }, 'background task failed'))
        .finally(() => running.delete(p));
      running.add(p);
    },
    async idle() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
