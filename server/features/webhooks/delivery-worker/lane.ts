import type { Lane } from '../../../platform/jobs/claim-loop.ts';
import { claimDeliveries, releaseClaim, type ClaimedDelivery } from '../delivery-claims.ts';
import { DELIVERY_JOB } from '../delivery-job.ts';
import { deliver } from './deliver.ts';
import type { WorkerState } from './state.ts';

/**
 * The worker's lane of the claim loop: room for `concurrency` attempts in the fast lane, those in
 * the waiting lane not counted.
 */
export function laneOf(w: WorkerState): Lane<ClaimedDelivery> {
  return {
    name: DELIVERY_JOB,
    room: (running) => w.concurrency - (running - w.waiting.size),
    claim: (limit) => claimDeliveries(w.deps.db, w.deps.queue, w.holder, limit, w.perEndpoint),
    run: (d, signal) => run(w, d, signal),
    release: (d) => releaseClaim(w.deps.queue, d),
  };
}

/** Moves overdue attempts to the waiting lane while it has room; true when a slot was freed. */
function moveOverdue(w: WorkerState): boolean {
  const { overdue, waiting } = w;
  const before = waiting.size;
  while (overdue.length > 0 && waiting.size < w.waitingConcurrency) waiting.add(overdue.shift()!);
  return waiting.size > before;
}

/** One attempt, moved to the waiting lane once it runs past `slowAfterMs`. */
async function run(w: WorkerState, d: ClaimedDelivery, signal: AbortSignal): Promise<void> {
  const slow = setTimeout(() => {
    w.overdue.push(d);
    if (moveOverdue(w)) w.loop!.wake(DELIVERY_JOB);
  }, w.slowAfterMs).unref();
  try {
    await deliver(w, d, signal);
  } finally {
    clearTimeout(slow);
    if (w.overdue.includes(d)) w.overdue.splice(w.overdue.indexOf(d), 1);
    w.waiting.delete(d);
    // The claim loop wakes once this run is over.
    moveOverdue(w);
  }
}
