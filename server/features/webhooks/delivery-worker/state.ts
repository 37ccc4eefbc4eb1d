import type { ClaimLoop } from '../../../platform/jobs/claim-loop.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { newId } from '../../../core/ids.ts';
import { systemLookup, type LookupAll } from '../../../core/ssrf.ts';
import type { AttemptIo } from '../attempt-delivery.ts';
import type { ClaimedDelivery } from '../delivery-claims.ts';
import { postPinned, postWithFetch } from '../post-pinned.ts';

export interface DeliveryWorkerOptions {
  /** Replaces the HTTP transport (tests). It cannot pin the checked address; the default does. */
  fetchImpl?: typeof fetch;
  /** Resolves host names to every address; default `dns.lookup(host, { all: true })`. */
  lookup?: LookupAll;
  /** Attempts being worked on at once (the fast lane); default 16. */
  concurrency?: number;
  /**
   * An attempt whose receiver has not answered after `slowAfterMs` moves out of the fast lane
   * into a waiting lane of this size (default 256), freeing its slot: a receiver that hangs costs
   * a socket, not a place in the queue. Default 250 ms.
   */
  slowAfterMs?: number;
  waitingConcurrency?: number;
  /**
   * Attempts to one webhook in flight at once, in every process on the database together (the
   * claim counts its live leases); default 2.
   */
  perEndpoint?: number;
  /** How often to look for due deliveries when nothing wakes the worker (retries, other processes). */
  pollMs?: number;
  /** One attempt's deadline; the contract says 10 s. */
  timeoutMs?: number;
  /** Jitter source for retry delays. */
  random?: () => number;
}

export type DeliveryDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'cipher' | 'log' | 'queue'>;

/** What one worker keeps (startDeliveryWorker makes it once), passed to its functions. */
export interface WorkerState {
  deps: DeliveryDeps;
  concurrency: number;
  slowAfterMs: number;
  waitingConcurrency: number;
  perEndpoint: number;
  random: () => number;
  /** This worker's claims are its jobs' holder (`locked_by`). */
  holder: string;
  io: Omit<AttemptIo, 'stop'>;
  /** Attempts in the fast lane that have run past `slowAfterMs`, oldest first, waiting to move. */
  overdue: ClaimedDelivery[];
  /** Attempts in the waiting lane. */
  waiting: Set<ClaimedDelivery>;
  /** The claim loop running the worker's lane, once started. */
  loop: ClaimLoop | undefined;
}

export function createWorkerState(deps: DeliveryDeps, opts: DeliveryWorkerOptions): WorkerState {
  return {
    deps,
    concurrency: opts.concurrency ?? 16,
    slowAfterMs: opts.slowAfterMs ?? 250,
    waitingConcurrency: opts.waitingConcurrency ?? 256,
    perEndpoint: opts.perEndpoint ?? 2,
    random: opts.random ?? Math.random,
    holder: `webhooks-${newId('job')}`,
    io: {
      lookup: opts.lookup ?? systemLookup,
      post: opts.fetchImpl ? postWithFetch(opts.fetchImpl) : postPinned,
      allowPrivate: deps.config.webhookAllowPrivate,
      timeoutMs: opts.timeoutMs ?? 10_000,
    },
    overdue: [],
    waiting: new Set(),
    loop: undefined,
  };
}
