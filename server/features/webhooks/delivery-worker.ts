import { startClaimLoop, type ClaimLoop } from '../../platform/jobs/claim-loop.ts';
import { laneOf } from './delivery-worker/lane.ts';
import { createWorkerState, type DeliveryDeps, type DeliveryWorkerOptions } from './delivery-worker/state.ts';

export type { DeliveryDeps, DeliveryWorkerOptions } from './delivery-worker/state.ts';

/**
 * Its `stop` aborts attempts still running past the grace period and gives them back unrecorded,
 * due again at once for the next worker.
 */
export type DeliveryWorker = Pick<ClaimLoop, 'stop' | 'idle'>;

/**
 * Sends webhook deliveries (jobs of kind `webhook.deliver` in the shared queue), fairly: at most
 * `perEndpoint` attempts per webhook in flight across every process, and an attempt whose
 * receiver is slow to answer gives its place in this worker's fast lane up after `slowAfterMs`,
 * so receivers that hang (up to `waitingConcurrency` of them) do not delay anyone else's events.
 * It wakes as soon as a transaction in this process that wrote deliveries commits
 * (`queue.notify(DELIVERY_JOB)`), and polls every `pollMs` for retries that came due and for
 * deliveries other processes wrote. Claims are the queue's leases with the webhook as the fair key
 * (see delivery-claims.ts), so any number of workers in any number of processes can run against
 * one database. Its parts, in delivery-worker/: state.ts (its settings and lanes), lane.ts (the
 * claim loop's lane, the move to the waiting lane), deliver.ts (one attempt, recorded).
 */
export function startDeliveryWorker(deps: DeliveryDeps, opts: DeliveryWorkerOptions = {}): DeliveryWorker {
  const w = createWorkerState(deps, opts);
  // An attempt aborted on stop is given back by `deliver`, once its request has ended.
  const loop = startClaimLoop(deps, [laneOf(w)], { pollMs: opts.pollMs ?? 1000, windDownMs: Infinity });
  w.loop = loop;
  return { stop: loop.stop, idle: loop.idle };
}
