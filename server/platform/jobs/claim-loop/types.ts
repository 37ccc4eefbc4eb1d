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
