import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomString } from '../lib/ids.ts';
import type { Deps } from '../services/deps.ts';
import type { Job } from './queue.ts';

export interface JobHandler {
  kind: string;
  /** Jobs of this kind run at once in this process. */
  concurrency: number;
  leaseMs?: number;
  /** Runs the job. Throwing retries it (until max_attempts); `signal` aborts on shutdown. */
  handle(job: Job, signal: AbortSignal): Promise<void>;
  /** Delay before retrying after an error; default 5 s doubling. */
  retryDelayMs?(job: Job): number;
  /** The job ran out of attempts (errors or leases lost with a dead worker): record why. */
  onExhausted?(job: Job, reason: string): Promise<void>;
}

export interface Worker {
  id: string;
  /** Stops claiming, waits up to `graceMs` for running jobs, then aborts and releases them. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves when nothing is running (tests). */
  idle(): Promise<void>;
}

/**
 * Runs handlers against the durable queue: claims with a lease, renews the lease while a job
 * runs, wakes at once when this process enqueues work and polls as the fallback.
 */
export function startWorker(
  deps: Deps,
  handlers: JobHandler[],
  opts: { pollMs?: number; id?: string } = {},
): Worker {
  const id = opts.id ?? `${hostname()}-${process.pid}-${randomString(6)}`;
  const pollMs = opts.pollMs ?? 1000;
  let running = true;
  const inFlight = new Map<string, { promise: Promise<void>; abort: AbortController; kind: string }>();
  const wakers = new Map<string, () => void>();
  // Kinds woken while their loop was claiming: the next wait returns at once, so a job enqueued
  // during a claim that missed it is not left for the poll.
  const missedWakes = new Set<string>();
  const wake = (kind: string) => {
    const waker = wakers.get(kind);
    if (waker) waker();
    else missedWakes.add(kind);
  };
  const idleWaiters: (() => void)[] = [];

  const checkIdle = () => {
    if (inFlight.size === 0) idleWaiters.splice(0).forEach((r) => r());
  };

  const unsubscribe = deps.queue.onNotify(wake);

  async function runOne(handler: JobHandler, job: Job) {
    const leaseMs = handler.leaseMs ?? deps.config.jobLeaseMs;
    const abort = new AbortController();
    const lease = keepLease(job, leaseMs, () => {
      deps.log.warn({ job: job.id, kind: job.kind }, 'lost the lease of a running job; stopping it');
      abort.abort(new Error('the lease of this job was lost'));
    });
    const promise = (async () => {
      try {
        if (job.attempts > job.max_attempts) {
          const reason = `the job was interrupted ${job.attempts - 1} times (a worker stopped while running it)`;
          await handler.onExhausted?.(job, reason);
          await deps.queue.fail(job.id, id, reason, null);
          return;
        }
        await handler.handle(job, abort.signal);
        await deps.queue.complete(job.id, id);
      } catch (err) {
        if (abort.signal.aborted && !running) return; // released on shutdown
        // Another worker may run it now: neither retry nor give up what is no longer ours.
        if (lease.lost()) return;
        const message = err instanceof Error ? err.message : String(err);
        if (job.attempts < job.max_attempts) {
          const delay = handler.retryDelayMs?.(job) ?? 5000 * 2 ** (job.attempts - 1);
          await deps.queue.fail(job.id, id, message, new Date(deps.clock.now().getTime() + delay));
        } else {
          await handler.onExhausted?.(job, message);
          await deps.queue.fail(job.id, id, message, null);
        }
      }
    })()
      .catch((err: unknown) => deps.log.error({ err, job: job.id }, 'job bookkeeping failed'))
      .finally(() => {
        lease.stop();
        inFlight.delete(job.id);
        wake(handler.kind);
        checkIdle();
      });
    inFlight.set(job.id, { promise, abort, kind: handler.kind });
  }

  /**
   * Renews the lease a third of the way through it. A renewal the database refuses (the job was
   * claimed again) or none succeeding before the lease ends means another worker may have the
   * job: `onLost` stops this run, so one job never runs twice at once.
   */
  function keepLease(job: Job, leaseMs: number, onLost: () => void) {
    // Process time, not deps.clock: the timer that renews runs on real time too.
    let validUntil = performance.now() + leaseMs;
    let lost = false;
    let renewing = false;
    const lose = () => {
      if (lost) return;
      lost = true;
      onLost();
    };
    const timer = setInterval(
      () => {
        if (lost) return;
        if (performance.now() > validUntil) return lose();
        if (renewing) return;
        renewing = true;
        const asked = performance.now();
        deps.queue
          .extend(job.id, id, leaseMs)
          .then((held) => {
            if (held) validUntil = asked + leaseMs;
            else lose();
          })
          .catch((err: unknown) => deps.log.warn({ err, job: job.id }, 'lease renewal failed'))
          .finally(() => (renewing = false));
      },
      Math.max(250, Math.floor(leaseMs / 3)),
    );
    return { lost: () => lost, stop: () => clearInterval(timer) };
  }

  async function loop(handler: JobHandler) {
    const active = () => [...inFlight.values()].filter((f) => f.kind === handler.kind).length;
    while (running) {
      missedWakes.delete(handler.kind);
      let claimed = false;
      if (active() < handler.concurrency) {
        try {
          const job = await deps.queue.claim([handler.kind], id, handler.leaseMs ?? deps.config.jobLeaseMs);
          if (job && running) {
            claimed = true;
            void runOne(handler, job);
          } else if (job) {
            await deps.queue.release(job.id, id);
          }
        } catch (err) {
          deps.log.warn({ err, kind: handler.kind }, 'claiming a job failed; retrying');
        }
      }
      if (claimed) continue;
      // stop() may have run while the claim was in flight: do not start a poll-long wait then.
      if (!running) break;
      if (missedWakes.has(handler.kind)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done() {
          clearTimeout(timer);
          wakers.delete(handler.kind);
          resolve();
        }
        wakers.set(handler.kind, done);
      });
    }
  }

  const loops = handlers.map((h) => loop(h));

  return {
    id,
    async stop(graceMs = 10_000) {
      running = false;
      unsubscribe();
      [...wakers.values()].forEach((w) => w());
      await Promise.all(loops);
      const pending = [...inFlight.entries()];
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      const result = await Promise.race([Promise.all(pending.map(([, f]) => f.promise)), timeout]);
      if (result === 'timeout') {
        const unfinished = [...inFlight.entries()];
        for (const [, f] of unfinished) f.abort.abort(new Error('the worker is shutting down'));
        // Let aborted runs wind down (kill their commands, write their last log lines) before the
        // jobs are handed back, so no other worker starts one while it still runs here.
        await Promise.race([
          Promise.all(unfinished.map(([, f]) => f.promise)),
          new Promise((r) => setTimeout(r, 5000).unref()),
        ]);
        for (const [jobId] of unfinished) await deps.queue.release(jobId, id);
      }
    },
    idle() {
      return inFlight.size === 0 ? Promise.resolve() : new Promise((r) => idleWaiters.push(r));
    },
  };
}
