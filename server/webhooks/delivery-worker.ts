import type { Deps } from '../services/deps.ts';
import { attemptDelivery, type AttemptIo } from './attempt-delivery.ts';
import { claimDueDeliveries, releaseClaim, type ClaimedDelivery } from './claim-deliveries.ts';
import { DELIVERY_JOB } from './outbox.ts';
import { postPinned, postWithFetch } from './post-pinned.ts';
import { dropOrphan, recordAttempt, skipDelivery } from './record-attempt.ts';
import { systemLookup, type LookupAll } from './ssrf.ts';

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
  /** Attempts to one webhook in flight at once in this worker; default 2. */
  perEndpoint?: number;
  /** How often to look for due deliveries when nothing wakes the worker (retries, other processes). */
  pollMs?: number;
  /** One attempt's deadline; the contract says 10 s. */
  timeoutMs?: number;
  /** Jitter source for retry delays. */
  random?: () => number;
}

export interface DeliveryWorker {
  /**
   * Stops claiming and waits up to `graceMs` for attempts in flight; attempts still running then
   * are aborted and given back unrecorded, due again at once for the next worker.
   */
  stop(graceMs?: number): Promise<void>;
  /** Resolves once nothing is due and nothing is in flight (checked after the call). */
  idle(): Promise<void>;
}

export type DeliveryDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'cipher' | 'log' | 'queue'>;

const INACTIVE = 'not sent: the webhook is inactive because its receiver answered 410 Gone';

/**
 * Sends webhook deliveries from the outbox table, fairly: at most `perEndpoint` attempts per
 * webhook, and an attempt whose receiver is slow to answer gives its slot up after `slowAfterMs`,
 * so receivers that hang (up to `waitingConcurrency` of them) do not delay anyone else's events. It wakes as soon as a transaction in this
 * process that wrote deliveries commits (`queue.notify(DELIVERY_JOB)`), and polls every `pollMs`
 * for retries that came due and for deliveries other processes wrote. Claims are leases on the
 * delivery rows themselves (see claim-deliveries.ts), so any number of workers in any number of
 * processes can run against one database.
 */
export function startDeliveryWorker(deps: DeliveryDeps, opts: DeliveryWorkerOptions = {}): DeliveryWorker {
  const concurrency = opts.concurrency ?? 16;
  const slowAfterMs = opts.slowAfterMs ?? 250;
  const waitingConcurrency = opts.waitingConcurrency ?? 256;
  const perEndpoint = opts.perEndpoint ?? 2;
  const pollMs = opts.pollMs ?? 1000;
  const random = opts.random ?? Math.random;
  const stopping = new AbortController();
  const io: AttemptIo = {
    lookup: opts.lookup ?? systemLookup,
    post: opts.fetchImpl ? postWithFetch(opts.fetchImpl) : postPinned,
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: opts.timeoutMs ?? 10_000,
    stop: stopping.signal,
  };

  let running = true;
  const inFlight = new Set<Promise<void>>();
  /** In-flight attempts by webhook id, for the per-endpoint bound. */
  const byEndpoint = new Map<string, number>();
  /** Attempts in the fast lane that have run past `slowAfterMs`, oldest first, waiting to move. */
  const overdue: Promise<void>[] = [];
  const waiting = new Set<Promise<void>>();
  const fastInFlight = () => inFlight.size - waiting.size;
  /** Moves overdue attempts to the waiting lane while it has room; true when a slot was freed. */
  const moveOverdue = () => {
    let moved = false;
    while (overdue.length > 0 && waiting.size < waitingConcurrency) {
      const p = overdue.shift()!;
      if (!inFlight.has(p)) continue;
      waiting.add(p);
      moved = true;
    }
    if (moved) poke();
  };
  let wake: (() => void) | null = null;
  // Set by a wake-up that arrives while the loop is busy claiming, so it is not lost.
  let woken = false;
  let round = 0;
  const idleWaiters: { after: number; resolve: () => void }[] = [];

  const poke = () => {
    woken = true;
    wake?.();
  };
  const unsubscribe = deps.queue.onNotify((kind) => {
    if (kind === DELIVERY_JOB) poke();
  });

  async function deliver(d: ClaimedDelivery): Promise<void> {
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
    const result = await attemptDelivery({ ...d, payload, url: d.webhook.url, secret }, io);
    if (result.kind === 'interrupted') return releaseClaim(deps.db, deps.clock, d);
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

  function start(d: ClaimedDelivery) {
    byEndpoint.set(d.webhookId, (byEndpoint.get(d.webhookId) ?? 0) + 1);
    const slow = setTimeout(() => {
      overdue.push(p);
      moveOverdue();
    }, slowAfterMs);
    slow.unref();
    const p: Promise<void> = deliver(d)
      .catch((err: unknown) => deps.log.error({ err, delivery: d.id }, 'webhook delivery bookkeeping failed'))
      .finally(() => {
        clearTimeout(slow);
        inFlight.delete(p);
        waiting.delete(p);
        const left = byEndpoint.get(d.webhookId)! - 1;
        if (left > 0) byEndpoint.set(d.webhookId, left);
        else byEndpoint.delete(d.webhookId);
        moveOverdue();
        poke();
      });
    inFlight.add(p);
  }

  async function loop() {
    while (running) {
      woken = false;
      const thisRound = ++round;
      const capacity = concurrency - fastInFlight();
      let claimed: ClaimedDelivery[] = [];
      if (capacity > 0) {
        try {
          claimed = await claimDueDeliveries(deps.db, deps.clock, capacity, {
            perEndpoint,
            inFlight: byEndpoint,
          });
        } catch (err) {
          deps.log.warn({ err }, 'claiming webhook deliveries failed; retrying');
        }
      }
      if (!running) {
        await Promise.all(claimed.map((d) => releaseClaim(deps.db, deps.clock, d)));
        break;
      }
      claimed.forEach(start);
      // A full batch means more may be due: claim again as soon as a slot is free.
      if (capacity > 0 && claimed.length === capacity) continue;
      if (inFlight.size === 0 && claimed.length === 0) {
        for (const w of idleWaiters.splice(0)) {
          if (w.after < thisRound) w.resolve();
          else idleWaiters.push(w);
        }
      }
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done() {
          clearTimeout(timer);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
  }

  const looping = loop();

  return {
    async stop(graceMs = 10_000) {
      if (!running) return looping;
      running = false;
      unsubscribe();
      wake?.();
      await looping;
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      const settled = await Promise.race([Promise.all(inFlight).then(() => 'done' as const), timer]);
      if (settled === 'timeout') {
        stopping.abort(new Error('the delivery worker is stopping'));
        await Promise.all(inFlight);
      }
      idleWaiters.splice(0).forEach((w) => w.resolve());
    },
    idle() {
      if (!running) return Promise.resolve();
      return new Promise<void>((resolve) => {
        // Only a claim round that starts after this call proves nothing committed before it is due.
        idleWaiters.push({ after: round, resolve });
        poke();
      });
    },
  };
}

/** The stored payload with `timestamp` set to `at`; anything unparsable is sent as stored. */
function restamp(payload: string, at: string): string {
  try {
    const parsed = JSON.parse(payload) as Record<string, unknown>;
    return JSON.stringify({ ...parsed, timestamp: at });
  } catch {
    return payload;
  }
}
