import { performance } from 'node:perf_hooks';
import { every } from '../../../core/every.ts';
import type { ClaimLoopState, LaneState } from './state.ts';
import type { Lane } from './types.ts';

/** Starts a claimed job's run, its lease kept while it runs. */
export function start<T extends { id: string }>(st: ClaimLoopState<T>, s: LaneState<T>, job: T): void {
  const abort = new AbortController();
  const stopLease = s.lane.lease && keepLease(st, s.lane.lease, job, abort);
  const done = s.lane
    .run(job, abort.signal)
    .catch((err: unknown) =>
      st.deps.log.error({ err, job: job.id, kind: s.lane.name }, 'job bookkeeping failed'),
    )
    .finally(() => {
      stopLease?.();
      s.runs.delete(job);
      s.wake.wake();
    });
  s.runs.set(job, { abort, done });
}

/**
 * Renews the lease a third of the way through it. A renewal the database refuses (the job was
 * claimed again) or none succeeding before the lease ends means another worker may have the
 * job: the run is aborted, so one job never runs twice at once.
 */
function keepLease<T extends { id: string }>(
  st: ClaimLoopState<T>,
  lease: NonNullable<Lane<T>['lease']>,
  job: T,
  abort: AbortController,
): () => void {
  const { deps } = st;
  // Process time, not deps.clock: the timer that renews runs on real time too.
  let validUntil = performance.now() + lease.ms;
  let renewing = false;
  const lose = () => {
    void timer.stop();
    if (abort.signal.aborted) return;
    deps.log.warn({ job: job.id }, 'lost the lease of a running job; stopping it');
    abort.abort(new Error('the lease of this job was lost'));
  };
  // Each tick checks the lease even while a renewal hangs, so the renewal is not awaited by the
  // tick (which would make every() skip the checks) but flagged by `renewing`.
  const timer = every(
    Math.max(250, Math.floor(lease.ms / 3)),
    () => {
      if (performance.now() > validUntil) return lose();
      if (renewing) return;
      renewing = true;
      const asked = performance.now();
      lease
        .renew(job)
        .then((held) => (held ? (validUntil = asked + lease.ms) : lose()))
        .catch((err: unknown) => deps.log.warn({ err, job: job.id }, 'lease renewal failed'))
        .finally(() => (renewing = false));
    },
    { log: deps.log, name: 'keeping the lease of a running job' },
  );
  return () => void timer.stop();
}
