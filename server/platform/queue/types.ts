import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, JobsTable } from '../store/schema.ts';
import type { Fairness } from './fair-claim.ts';

export type Job = Selectable<JobsTable>;

/**
 * Jobs not finished yet, written out literally so that both databases use the partial index
 * `jobs_open` (migration 014): a claim then reads open jobs only, however many finished ones remain.
 */
export const OPEN = sql<boolean>`status in ('queued', 'running')`;

/** Starts the `last_error` of a job claimed again because its previous worker's lease ran out. */
export const LEASE_EXPIRED = 'lease expired';

export interface EnqueueOptions {
  runAt?: Date;
  /** Attempts before the job is given up (a lease running out counts as an attempt). */
  maxAttempts?: number;
  /** Whose job this is, for claims with `Fairness` (builds: the organization). */
  fairKey?: string;
  /**
   * Jobs of one key run one at a time, in the order they were enqueued: a job is not claimed while
   * an older one of its key is open (queued, waiting for a retry, or running).
   */
  orderingKey?: string;
  /** The user whose token may claim it through the API (`claim(..., { ownerUserId })`). */
  ownerUserId?: string;
  /** Its id, when the caller's must be stable (a repeat is then not stored again). */
  id?: string;
  /** A job with this key kept already stands for this one: nothing new is stored. */
  dedupeKey?: string;
  /** What it is about, for listings by it (webhook deliveries: the webhook; index `jobs_subject`). */
  subject?: string;
}

/** Narrows a claim to the jobs of one owner (claims through the API). */
export interface ClaimScope {
  ownerUserId?: string;
}

/**
 * A durable job queue in the database. A claim takes a lease; a worker that dies loses its
 * lease and the job is claimed again. Enqueue inside the caller's transaction so the job
 * exists exactly when the change that asked for it does.
 */
export interface JobQueue {
  /** Stores a job and returns its id. */
  enqueue(db: Kysely<Database>, kind: string, payload: unknown, opts?: EnqueueOptions): Promise<string>;
  /**
   * Stores a job unless one is kept already under its `id` or `dedupeKey`: then that one stands
   * for it, nothing new is stored, and `duplicate` is true.
   */
  enqueueOnce(
    db: Kysely<Database>,
    kind: string,
    payload: unknown,
    opts: EnqueueOptions,
  ): Promise<{ id: string; duplicate: boolean }>;
  /**
   * Claims the next runnable job of one of `kinds`, or null. `attempts` counts this claim. A job
   * with an ordering key waits while an older one of its key is open. With `fairness`, owners take
   * turns and each is held to its limit (fair-claim.ts); else oldest first. `scope` narrows the
   * claim to one user's jobs.
   */
  claim(
    kinds: string[],
    workerId: string,
    leaseMs: number,
    fairness?: Fairness,
    scope?: ClaimScope,
  ): Promise<Job | null>;
  /**
   * Claims up to `limit` runnable jobs in one transaction, each as `claim` would pick it next
   * (fairness turns included, updated as each is taken): fewer round trips than `limit` claims.
   */
  claimMany(
    kinds: string[],
    workerId: string,
    leaseMs: number,
    limit: number,
    fairness?: Fairness,
    scope?: ClaimScope,
  ): Promise<Job[]>;
  extend(jobId: string, workerId: string, leaseMs: number): Promise<boolean>;
  /** The `complete`, `fail` and `release` of a claim: false when `workerId` no longer holds it. */
  complete(jobId: string, workerId: string): Promise<boolean>;
  /** Gives the job back: retried at `retryAt`, or failed for good when null. */
  fail(jobId: string, workerId: string, error: string, retryAt: Date | null): Promise<boolean>;
  /** Releases a claimed job so another worker can take it at once (graceful shutdown). */
  release(jobId: string, workerId: string): Promise<boolean>;
  /**
   * Called after a transaction that enqueued `kind` committed, to wake idle workers: in this
   * process at once, and in every other process on the database through the notifier.
   */
  notify(kind: string): void;
  /** Fires for wake-ups from this process and, on PostgreSQL, from every other one. */
  onNotify(listener: (kind: string) => void): () => void;
}
