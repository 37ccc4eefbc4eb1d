import type { ClaimLoopState } from './state.ts';
import { Stopped } from './types.ts';

/** ClaimLoop.stop (once: startClaimLoop keeps the first call's promise). */
export async function stop<T extends { id: string }>(st: ClaimLoopState<T>, graceMs: number): Promise<void> {
  const { all } = st;
  st.running = false;
  st.unsubscribe();
  for (const s of all) s.wake.wake();
  await Promise.all(st.loops);
  const runs = () => all.flatMap((s) => [...s.runs].map(([job, run]) => ({ s, job, ...run })));
  const late = (await settleWithin(runs(), graceMs)) ? [] : runs();
  for (const { abort } of late) abort.abort(new Stopped('the worker is shutting down'));
  // Let aborted runs wind down (kill their commands, write their last log lines) before their
  // jobs are handed back, so that no other worker starts one while it still runs here.
  await settleWithin(late, st.opts.windDownMs);
  for (const { s, job } of late) if (s.runs.has(job)) await s.lane.release(job);
  for (const s of all) s.idlers.splice(0).forEach((w) => w.resolve());
}

/** Whether the runs all ended within `ms` (they never reject). */
async function settleWithin(runs: { done: Promise<void> }[], ms: number): Promise<boolean> {
  const all = Promise.all(runs.map((r) => r.done)).then(() => true);
  if (ms === Infinity) return all;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)).unref());
  return Promise.race([all, timeout]).finally(() => clearTimeout(timer));
}
