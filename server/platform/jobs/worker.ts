import { hostname } from 'node:os';
import { randomString } from '../../core/ids.ts';
import type { Deps } from '../deps/deps.ts';
import { startClaimLoop, Stopped, type ClaimLoop, type Lane } from './claim-loop.ts';
import type { Fairness } from '../queue/fair-claim.ts';
import type { Job } from '../queue/queue.ts';

export interface JobHandler {
  kind: string;
  /** Jobs of this kind run at once in this process. */
  concurrency: number;
  /** Owners take turns, each within its limit, instead of oldest first (server/platform/queue/fair-claim.ts). */
  fairness?: Fairness;
  leaseMs?: number;
  /** Runs the job. Throwing retries it (until max_attempts); `signal` aborts on shutdown. */
  handle(job: Job, signal: AbortSignal): Promise<void>;
  /** Delay before retrying after an error; default 5 s doubling. */
  retryDelayMs?(job: Job): number;
  /** The job ran out of attempts (errors or leases lost with a dead worker): record why. */
  onExhausted?(job: Job, reason: string): Promise<void>;
}

/** Its `stop` hands jobs still running past the grace period back to the queue. */
export interface Worker extends Pick<ClaimLoop, 'stop' | 'idle'> {
  id: string;
}

/**
 * Runs handlers against the durable queue, one claim loop lane per kind (see claim-loop.ts): a
 * claim takes a lease, renewed while the job runs; an error retries the job until `max_attempts`.
 */
export function startWorker(
  deps: Deps,
  handlers: JobHandler[],
  opts: { pollMs?: number; id?: string } = {},
): Worker {
  const id = opts.id ?? `${hostname()}-${process.pid}-${randomString(6)}`;

  async function run(handler: JobHandler, job: Job, signal: AbortSignal) {
    try {
      if (job.attempts > job.max_attempts) {
        const reason = `the job was interrupted ${job.attempts - 1} times (a worker stopped while running it)`;
        await handler.onExhausted?.(job, reason);
        await deps.queue.fail(job.id, id, reason, null);
        return;
      }
      await handler.handle(job, signal);
      await deps.queue.complete(job.id, id);
    } catch (err) {
      // Stopped after the grace period: handed back, now that it no longer runs here.
      if (signal.reason instanceof Stopped) {
        await deps.queue.release(job.id, id);
        return;
      }
      // Otherwise the lease was lost: another worker may run it now, so neither retry nor give up
      // what is no longer ours.
      if (signal.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      if (job.attempts < job.max_attempts) {
        const delay = handler.retryDelayMs?.(job) ?? 5000 * 2 ** (job.attempts - 1);
        await deps.queue.fail(job.id, id, message, new Date(deps.clock.now().getTime() + delay));
      } else {
        await handler.onExhausted?.(job, message);
        await deps.queue.fail(job.id, id, message, null);
      }
    }
  }

  const lanes = handlers.map((handler): Lane<Job> => {
    const leaseMs = handler.leaseMs ?? deps.config.jobLeaseMs;
    return {
      name: handler.kind,
      room: (running) => handler.concurrency - running,
      batch: 1,
      claim: async () =>
        [await deps.queue.claim([handler.kind], id, leaseMs, handler.fairness)].filter((job) => job !== null),
      run: (job, signal) => run(handler, job, signal),
      release: async (job) => {
        await deps.queue.release(job.id, id);
      },
      lease: { ms: leaseMs, renew: (job) => deps.queue.extend(job.id, id, leaseMs) },
    };
  });
  // Aborted jobs get 5 s to wind down (kill their commands, write their last log lines).
  const loop = startClaimLoop(deps, lanes, { pollMs: opts.pollMs ?? 1000, windDownMs: 5000 });
  return { id, stop: loop.stop, idle: loop.idle };
}
