import { performance } from 'node:perf_hooks';
import { every } from '../../core/every.ts';
import { wakeUp, type WakeUp } from '../../core/wake-up.ts';
import type { Deps } from '../deps/deps.ts';

/** One kind of claimable work, with its own loop, bound and wake-ups. */
export interface Lane<T extends { id: string }> {
  /** The kind whose `queue.notify` wakes this lane; it also names the lane in logs. */
  name: string;
  /** How many more jobs may start now, given the `running` ones of this lane. */
  room(running: number): number;
  /** At most this many per claim (default: all the room). */
  batch?: number;
  /** Claims up to `limit` due jobs, each leased to this process. */
  claim(limit: number): Promise<T[]>;
  /**
   * Runs a claimed job and records its outcome. `signal` aborts when the lease is lost, or with
   * `Stopped`: the run then hands its job back. What it does before its first `await` is done
   * before the next claim.
   */
  run(job: T, signal: AbortSignal): Promise<void>;
  /** Hands a job back at once: it was claimed after stop, or was still running past the wind-down. */
  release(job: T): Promise<void>;
  /** Renews the claim while the job runs: resolves false when another worker holds it now. */
  lease?: { ms: number; renew(job: T): Promise<boolean> };
}

export interface ClaimLoop {
  /** Stops claiming, waits up to `graceMs` for running jobs, then aborts them (see `Stopped`). */
  stop: (graceMs?: number) => Promise<void>;
  /** Resolves once every lane had a claim round, begun after the call, with nothing due or running. */
  idle: () => Promise<void>;
  /** Wakes a lane, as `queue.notify(name)` does. */
  wake: (name: string) => void;
}

/** Why a running job's signal aborted, when not because its lease was lost: the loop is stopping. */
export class Stopped extends Error {}

interface LaneState<T extends { id: string }> {
  lane: Lane<T>;
  wake: WakeUp;
  runs: Map<T, { abort: AbortController; done: Promise<void> }>;
  /** Claim rounds so far, for `idle`. */
  round: number;
  idlers: { after: number; resolve: () => void }[];
}

/**
 * Runs each lane's loop: claim up to the lane's room, start what was claimed, then sleep until a
 * wake-up (`queue.notify` of the lane's name, a job of the lane ending) or `pollMs`, the fallback
 * for work of other processes and for retries coming due. A wake-up during a claim is kept (see
 * wake-up.ts), so work enqueued while a claim missed it is not left for the poll.
 */
export function startClaimLoop<T extends { id: string }>(
  deps: Pick<Deps, 'log' | 'queue'>,
  lanes: Lane<T>[],
  /** `windDownMs`: how long runs aborted on stop may take to end before their jobs are released anyway. */
  opts: { pollMs: number; windDownMs: number },
): ClaimLoop {
  let running = true;
  const states = new Map<string, LaneState<T>>(
    lanes.map((lane) => [lane.name, { lane, wake: wakeUp(), runs: new Map(), round: 0, idlers: [] }]),
  );
  const all = [...states.values()];
  const wake = (name: string) => states.get(name)?.wake.wake();
  const unsubscribe = deps.queue.onNotify(wake);

  function start(s: LaneState<T>, job: T) {
    const abort = new AbortController();
    const stopLease = s.lane.lease && keepLease(s.lane.lease, job, abort);
    const done = s.lane
      .run(job, abort.signal)
      .catch((err: unknown) =>
        deps.log.error({ err, job: job.id, kind: s.lane.name }, 'job bookkeeping failed'),
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
  function keepLease(lease: NonNullable<Lane<T>['lease']>, job: T, abort: AbortController) {
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

  async function loop(s: LaneState<T>) {
    const { lane } = s;
    while (running) {
      s.wake.reset();
      const round = ++s.round;
      const room = lane.room(s.runs.size);
      const asked = Math.min(room, lane.batch ?? room);
      let claimed: T[] = [];
      if (asked > 0) {
        try {
          claimed = await lane.claim(asked);
        } catch (err) {
          deps.log.warn({ err, kind: lane.name }, 'claiming jobs failed; retrying');
        }
      }
      if (!running) {
        await Promise.all(claimed.map((job) => lane.release(job)));
        break;
      }
      for (const job of claimed) start(s, job);
      // A full claim means more may be due: claim again while there is room.
      if (asked > 0 && claimed.length === asked) continue;
      if (claimed.length === 0 && s.runs.size === 0) {
        for (const w of s.idlers.filter((w) => w.after < round)) w.resolve();
        s.idlers = s.idlers.filter((w) => w.after >= round);
      }
      await s.wake.sleep(opts.pollMs);
    }
  }

  const loops = all.map(loop);
  let stopping: Promise<void> | undefined;

  async function stop(graceMs: number) {
    running = false;
    unsubscribe();
    for (const s of all) s.wake.wake();
    await Promise.all(loops);
    const runs = () => all.flatMap((s) => [...s.runs].map(([job, run]) => ({ s, job, ...run })));
    const late = (await settleWithin(runs(), graceMs)) ? [] : runs();
    for (const { abort } of late) abort.abort(new Stopped('the worker is shutting down'));
    // Let aborted runs wind down (kill their commands, write their last log lines) before their
    // jobs are handed back, so that no other worker starts one while it still runs here.
    await settleWithin(late, opts.windDownMs);
    for (const { s, job } of late) if (s.runs.has(job)) await s.lane.release(job);
    for (const s of all) s.idlers.splice(0).forEach((w) => w.resolve());
  }

  return {
    stop: (graceMs = 10_000) => (stopping ??= stop(graceMs)),
    async idle() {
      if (!running) return;
      // Only a claim round that starts after this call proves nothing committed before it is due.
      const idle = all.map((s) => new Promise<void>((resolve) => s.idlers.push({ after: s.round, resolve })));
      for (const s of all) s.wake.wake();
      await Promise.all(idle);
    },
    wake,
  };
}

/** Whether the runs all ended within `ms` (they never reject). */
async function settleWithin(runs: { done: Promise<void> }[], ms: number): Promise<boolean> {
  const all = Promise.all(runs.map((r) => r.done)).then(() => true);
  if (ms === Infinity) return all;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)).unref());
  return Promise.race([all, timeout]).finally(() => clearTimeout(timer));
}
