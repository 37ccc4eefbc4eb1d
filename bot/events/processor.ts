import type { Logger } from 'pino';
import type { ClaimedGitHubEvent } from '../../api/schemas/github-events.ts';
import type { SlipwayClient } from '../../api/client/index.ts';

export interface EventProcessorOptions {
  slipway: SlipwayClient;
  /** Checks a stored delivery's signature again: the queue is only as trusted as GitHub's HMAC. */
  verify(body: string, signature: string): Promise<boolean>;
  /** Runs the App's handlers for one event (Probot's `receive`). */
  handle(event: { id: string; name: string; payload: unknown }): Promise<void>;
  log: Logger;
  /** Events processed at once (of different pull requests). */
  concurrency?: number;
  /** How long a claim holds; a process that dies mid-event leaves it to the next one after this. */
  leaseMs?: number;
  /** How often the queue is asked for due events when nothing woke the processor. */
  pollMs?: number;
}

/**
 * Processes the GitHub events the receiver stored, from the service's queue: claims due events
 * (the oldest of each pull request), runs the handlers, and finishes each as done or to retry
 * with backoff. Woken at once by the receiver; polls for retries and other processes' events.
 * On stop it takes no more, waits for what runs up to the grace, and hands the rest back.
 */
export function createEventProcessor(opts: EventProcessorOptions) {
  const concurrency = opts.concurrency ?? 4;
  const leaseMs = opts.leaseMs ?? 120_000;
  // A minute: local deliveries and retries wake the processor themselves; this finds the events of
  // processes that died (after their claim ran out) without spending the bot user's rate limit.
  const pollMs = opts.pollMs ?? 60_000;
  const running = new Map<string, { event: ClaimedGitHubEvent; done: Promise<void> }>();
  let stopped = false;
  let claiming = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const idleWaiters = new Set<() => void>();

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  };

  const settleIdle = () => {
    if (running.size > 0 || claiming) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters.clear();
  };

  async function run(event: ClaimedGitHubEvent): Promise<void> {
    let outcome: 'done' | 'retry' = 'done';
    let error: string | undefined;
    try {
      if (!(await opts.verify(event.body, event.signature))) {
        // Not GitHub's: nothing to do with it, ever.
        opts.log.warn({ delivery: event.deliveryId }, 'stored GitHub event does not verify; dropped');
      } else {
        await opts.handle({
          id: event.deliveryId,
          name: event.name,
          payload: JSON.parse(event.body) as unknown,
        });
      }
    } catch (err) {
      outcome = 'retry';
      error = String((err as Error).message ?? err).slice(0, 2000);
      opts.log.warn(
        { err, delivery: event.deliveryId, attempts: event.attempts + 1 },
        'GitHub event failed; retrying later',
      );
    }
    if (stopped && !running.has(event.id)) return; // handed back by stop(): another process has it
    try {
      const r = await opts.slipway.githubEvents.finish(event.id, {
        lease: event.lease,
        outcome,
        ...(error ? { error } : {}),
      });
      if (r.status === 'failed')
        opts.log.error({ delivery: event.deliveryId, error }, 'GitHub event given up after its last try');
      if (r.nextAttemptAt) schedule(Math.max(0, Date.parse(r.nextAttemptAt) - Date.now()));
    } catch (err) {
      // The claim ran out and someone else took it, or the service is away: the lease settles it.
      opts.log.warn({ err, delivery: event.deliveryId }, 'could not finish a GitHub event');
    }
  }

  async function tick(): Promise<void> {
    if (stopped) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    try {
      do {
        again = false;
        while (!stopped && running.size < concurrency) {
          const batch = await opts.slipway.githubEvents.claim({ limit: concurrency - running.size, leaseMs });
          if (batch.length === 0) break;
          for (const event of batch) {
            const done = run(event).finally(() => {
              running.delete(event.id);
              void tick();
              settleIdle();
            });
            running.set(event.id, { event, done });
          }
        }
      } while (again && !stopped);
    } catch (err) {
      opts.log.warn({ err }, 'could not claim GitHub events');
    } finally {
      claiming = false;
      schedule(pollMs);
      settleIdle();
    }
  }

  return {
    /** Something was stored: look at once. */
    wake: () => void tick(),
    /** Resolves when nothing runs and the last look found nothing due (tests, shutdown). */
    idle: () =>
      new Promise<void>((resolve) => {
        if (running.size === 0 && !claiming) return resolve();
        idleWaiters.add(resolve);
      }),
    /** Takes no more events; waits up to `graceMs` for those running, then hands the rest back. */
    async stop(graceMs: number): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      const all = Promise.allSettled([...running.values()].map((r) => r.done));
      await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
      const left = [...running.values()];
      running.clear();
      await Promise.allSettled(
        left.map(({ event }) =>
          opts.slipway.githubEvents.finish(event.id, { lease: event.lease, outcome: 'release' }),
        ),
      );
      if (left.length > 0) opts.log.info({ events: left.length }, 'handed unfinished GitHub events back');
      settleIdle();
    },
  };
}

export type EventProcessor = ReturnType<typeof createEventProcessor>;
