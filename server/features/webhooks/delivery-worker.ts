import { startClaimLoop, type ClaimLoop, type Lane } from '../../platform/jobs/claim-loop.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { attemptDelivery, type AttemptIo } from './attempt-delivery.ts';
import { claimDeliveries, releaseClaim, type ClaimedDelivery } from './delivery-claims.ts';
import { newId } from '../../core/ids.ts';
import { DELIVERY_JOB } from './delivery-job.ts';
import { postPinned, postWithFetch } from './post-pinned.ts';
import { dropOrphan, recordAttempt, skipDelivery } from './record-attempt.ts';
import { systemLookup, type LookupAll } from '../../core/ssrf.ts';
import { decodeJson } from '../../core/json-column.ts';
import { z } from 'zod';

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

/**
 * Its `stop` aborts attempts still running past the grace period and gives them back unrecorded,
 * due again at once for the next worker.
 */
export type DeliveryWorker = Pick<ClaimLoop, 'stop' | 'idle'>;

export type DeliveryDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'cipher' | 'log' | 'queue'>;

const INACTIVE = 'not sent: the webhook is inactive because its receiver answered 410 Gone';

/**
 * Sends webhook deliveries (jobs of kind `webhook.deliver` in the shared queue), fairly: at most
 * `perEndpoint` attempts per webhook in flight across every process, and an attempt whose
 * receiver is slow to answer gives its place in this worker's fast lane up after `slowAfterMs`,
 * so receivers that hang (up to `waitingConcurrency` of them) do not delay anyone else's events.
 * It wakes as soon as a transaction in this process that wrote deliveries commits
 * (`queue.notify(DELIVERY_JOB)`), and polls every `pollMs` for retries that came due and for
 * deliveries other processes wrote. Claims are the queue's leases with the webhook as the fair key
 * (see delivery-claims.ts), so any number of workers in any number of processes can run against
 * one database.
 */
export function startDeliveryWorker(deps: DeliveryDeps, opts: DeliveryWorkerOptions = {}): DeliveryWorker {
  const concurrency = opts.concurrency ?? 16;
  const slowAfterMs = opts.slowAfterMs ?? 250;
  const waitingConcurrency = opts.waitingConcurrency ?? 256;
  const perEndpoint = opts.perEndpoint ?? 2;
  const random = opts.random ?? Math.random;
  /** This worker's claims are its jobs' holder (`locked_by`). */
  const holder = `webhooks-${newId('job')}`;
  const io: Omit<AttemptIo, 'stop'> = {
    lookup: opts.lookup ?? systemLookup,
    post: opts.fetchImpl ? postWithFetch(opts.fetchImpl) : postPinned,
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: opts.timeoutMs ?? 10_000,
  };

  /** Attempts in the fast lane that have run past `slowAfterMs`, oldest first, waiting to move. */
  const overdue: ClaimedDelivery[] = [];
  const waiting = new Set<ClaimedDelivery>();
  /** Moves overdue attempts to the waiting lane while it has room; true when a slot was freed. */
  const moveOverdue = () => {
    const before = waiting.size;
    while (overdue.length > 0 && waiting.size < waitingConcurrency) waiting.add(overdue.shift()!);
    return waiting.size > before;
  };

  async function deliver(d: ClaimedDelivery, stop: AbortSignal): Promise<void> {
    if (!d.webhook) return dropOrphan(deps.db, d);
    if (!d.webhook.active) {
      await skipDelivery(deps.db, deps.clock, d, INACTIVE);
      return;
    }
    const at = deps.clock.now().toISOString();
    let secret: string;
    try {
      secret = deps.cipher.decrypt(d.webhook.secretCiphertext);
    } catch (err) {
      // Retried: the operator can fix SLIPWAY_ENCRYPTION_KEY and the delivery then goes out.
      const error = `cannot sign the delivery: ${(err as Error).message}`;
      await recordAttempt(deps.db, deps.clock, d, {
        at,
        durationMs: 0,
        outcome: { kind: 'failed', statusCode: null, error },
      });
      return;
    }
    // Each attempt is stamped with the time it is sent: receivers reject timestamps more than five
    // minutes away, and a retry after an outage must still be accepted. The delivery id stays.
    const payload = restamp(d.payload, at);
    const result = await attemptDelivery(
      { ...d, payload, url: d.webhook.url, secret, at: new Date(at) },
      { ...io, stop },
    );
    if (result.kind === 'interrupted') return releaseClaim(deps.queue, d);
    const status = await recordAttempt(
      deps.db,
      deps.clock,
      d,
      { at, durationMs: result.durationMs, outcome: result.outcome },
      random,
    );
    deps.log.debug(
      { delivery: d.id, webhook: d.webhookId, attempt: d.attempt, outcome: result.outcome, status },
      'webhook delivery attempt',
    );
  }

  async function run(d: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const slow = setTimeout(() => {
      overdue.push(d);
      if (moveOverdue()) loop.wake(DELIVERY_JOB);
    }, slowAfterMs).unref();
    try {
      await deliver(d, signal);
    } finally {
      clearTimeout(slow);
      if (overdue.includes(d)) overdue.splice(overdue.indexOf(d), 1);
      waiting.delete(d);
      // The claim loop wakes once this run is over.
      moveOverdue();
    }
  }

  const lane: Lane<ClaimedDelivery> = {
    name: DELIVERY_JOB,
    room: (running) => concurrency - (running - waiting.size),
    claim: (limit) => claimDeliveries(deps.db, deps.queue, holder, limit, perEndpoint),
    run,
    release: (d) => releaseClaim(deps.queue, d),
  };
  // An attempt aborted on stop is given back by `deliver`, once its request has ended.
  const loop = startClaimLoop(deps, [lane], { pollMs: opts.pollMs ?? 1000, windDownMs: Infinity });
  return { stop: loop.stop, idle: loop.idle };
}

/** The stored payload with `timestamp` set to `at`; anything unparsable is sent as stored. */
function restamp(payload: string, at: string): string {
  try {
    const parsed = decodeJson(z.record(z.string(), z.unknown()), payload, 'A delivery’s payload');
    return JSON.stringify({ ...parsed, timestamp: at });
  } catch {
    return payload;
  }
}
