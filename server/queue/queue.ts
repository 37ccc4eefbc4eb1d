import { EventEmitter } from 'node:events';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { Database, JobsTable } from '../store/schema.ts';
import type { DialectHelpers } from '../store/dialect.ts';
import { JOBS_CHANNEL, type Notifier } from '../store/notify.ts';
import {
  lockOwner,
  NO_KEY,
  readTurns,
  runningOf,
  turnOrder,
  type Fairness,
  type Turn,
} from './fair-claim.ts';

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

export function createJobQueue(
  db: Kysely<Database>,
  dialect: DialectHelpers,
  clock: Clock,
  notifier?: Notifier,
): JobQueue {
  const bus = new EventEmitter();
  bus.setMaxListeners(100);
  // Only a cross-process notifier adds anything to the local bus; its echo of our own NOTIFY
  // wakes our workers a second time, which costs one empty claim.
  const remote = notifier?.crossProcess ? notifier : undefined;
  let unlisten: (() => void) | undefined;
  const now = () => clock.now().toISOString();

  /**
   * Open jobs of `kinds` that may be claimed at `at`, oldest due first: of those with an ordering
   * key, only the oldest open job of its key (so one runs at a time, in order).
   */
  function runnable(tx: Kysely<Database>, kinds: string[], at: string, scope: ClaimScope = {}) {
    let q = tx
      .selectFrom('jobs')
      .selectAll()
      .where(OPEN)
      .where('kind', 'in', kinds)
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', at)]),
          eb.and([eb('status', '=', 'running'), eb('lease_until', '<', at)]),
        ]),
      )
      .where((eb) =>
        eb.or([
          eb('jobs.ordering_key', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('jobs as older')
                .select(sql.lit(1).as('one'))
                .whereRef('older.ordering_key', '=', 'jobs.ordering_key')
                .where(sql<boolean>`older.status in ('queued', 'running')`)
                .whereRef('older.seq', '<', 'jobs.seq'),
            ),
          ),
        ]),
      );
    if (scope.ownerUserId === undefined) return q.orderBy('run_at');
    // Jobs stored in the same millisecond (a burst of the App's events) keep their order too; the
    // index jobs_open_user (owner_user_id, kind, run_at, seq) gives both.
    q = q.where('owner_user_id', '=', scope.ownerUserId);
    return q.orderBy('run_at').orderBy('seq');
  }

  /** Leases the first job `query` finds to `workerId`, or returns null. */
  async function take(
    tx: Kysely<Database>,
    query: ReturnType<typeof runnable>,
    at: string,
    leaseUntil: string,
    workerId: string,
  ): Promise<Job | null> {
    let q = query.limit(1);
    if (dialect.name === 'postgres') q = q.modifyEnd(sql`for update skip locked`);
    const job = await q.executeTakeFirst();
    if (!job) return null;
    // A running job here is one whose worker stopped renewing its lease: say so, since the
    // interrupted attempt could not record anything itself.
    const lastError =
      job.status === 'running'
        ? `${LEASE_EXPIRED}: ${job.locked_by ?? 'a worker'} held it until ${job.lease_until ?? 'unknown'}`
        : job.last_error;
    // The condition is repeated so that two claimers can never both win (SQLite has no SKIP LOCKED).
    const res = await tx
      .updateTable('jobs')
      .set({
        status: 'running',
        attempts: job.attempts + 1,
        lease_until: leaseUntil,
        locked_by: workerId,
        last_error: lastError,
        claimed_at: at,
        updated_at: at,
      })
      .where('id', '=', job.id)
      .where('attempts', '=', job.attempts)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    return {
      ...job,
      last_error: lastError,
      status: 'running' as const,
      attempts: job.attempts + 1,
      lease_until: leaseUntil,
      locked_by: workerId,
      claimed_at: at,
    };
  }

  const claimMany: JobQueue['claimMany'] = async (kinds, workerId, leaseMs, limit, fairness, scope) => {
    if (kinds.length === 0 || limit <= 0) return [];
    const at = now();
    const leaseUntil = new Date(clock.now().getTime() + leaseMs).toISOString();
    return db.transaction().execute(async (tx) => {
      const jobs: Job[] = [];
      const next = fairness
        ? fairTaker(tx, kinds, at, leaseUntil, workerId, await readTurns(tx, kinds, at, fairness), scope)
        : () => take(tx, runnable(tx, kinds, at, scope), at, leaseUntil, workerId);
      while (jobs.length < limit) {
        const job = await next();
        if (!job) break;
        jobs.push(job);
      }
      return jobs;
    });
  };

  /**
   * Takes the next job by the owners' turns, again on each call: an owner served moves back
   * (one more running, served now), an owner with nothing left to take drops out.
   */
  function fairTaker(
    tx: Kysely<Database>,
    kinds: string[],
    at: string,
    leaseUntil: string,
    workerId: string,
    turns: Turn[],
    scope?: ClaimScope,
  ): () => Promise<Job | null> {
    const locked = new Set<string>();
    return async () => {
      for (const key of turnOrder(turns)) {
        const turn = turns.find((t) => t.key === key)!;
        if (!locked.has(key)) {
          await lockOwner(tx, dialect, key);
          locked.add(key);
        }
        // Another process may have started one of the owner's jobs since the turns were read.
        if (turn.limit !== null && (await runningOf(tx, kinds, key, at)) >= turn.limit) {
          turns.splice(turns.indexOf(turn), 1);
          continue;
        }
        const mine = runnable(tx, kinds, at, scope).where((eb) =>
          key === NO_KEY ? eb('fair_key', 'is', null) : eb('fair_key', '=', key),
        );
        const job = await take(tx, mine, at, leaseUntil, workerId);
        if (job) {
          turn.running += 1;
          turn.lastClaimedAt = at;
          return job;
        }
        turns.splice(turns.indexOf(turn), 1);
      }
      return null;
    };
  }

  function insertJob(tx: Kysely<Database>, kind: string, payload: unknown, opts: EnqueueOptions) {
    const at = now();
    const key = opts.orderingKey ?? null;
    // SQLite writes one statement at a time, so one more than the key's highest is unique there.
    const seq =
      key === null
        ? null
        : dialect.name === 'postgres'
          ? sql<string>`nextval('jobs_seq')`
          : sql<number>`(select coalesce(max(seq), 0) + 1 from jobs where ordering_key = ${key})`;
    return tx.insertInto('jobs').values({
      id: opts.id ?? newId('job'),
      kind,
      payload: JSON.stringify(payload),
      status: 'queued',
      run_at: (opts.runAt ?? clock.now()).toISOString(),
      attempts: 0,
      max_attempts: opts.maxAttempts ?? 2,
      lease_until: null,
      locked_by: null,
      last_error: null,
      fair_key: opts.fairKey ?? null,
      claimed_at: null,
      ordering_key: key,
      seq,
      owner_user_id: opts.ownerUserId ?? null,
      dedupe_key: opts.dedupeKey ?? null,
      subject: opts.subject ?? null,
      created_at: at,
      updated_at: at,
    });
  }

  const enqueueOnce: JobQueue['enqueueOnce'] = async (tx, kind, payload, opts) => {
    const id = opts.id ?? newId('job');
    // Either key may be taken: the id (a stable one) or the dedupe key.
    const res = await insertJob(tx, kind, payload, { ...opts, id })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) > 0) return { id, duplicate: false };
    const kept = await tx
      .selectFrom('jobs')
      .select('id')
      .where((eb) =>
        opts.dedupeKey === undefined
          ? eb('id', '=', id)
          : eb.or([eb('id', '=', id), eb('dedupe_key', '=', opts.dedupeKey)]),
      )
      .orderBy('created_at')
      .orderBy('seq')
      .executeTakeFirst();
    // Gone between the insert and the read (pruned that instant): store it after all.
    return kept ? { id: kept.id, duplicate: true } : enqueueOnce(tx, kind, payload, opts);
  };

  return {
    async enqueue(tx, kind, payload, opts = {}) {
      const id = opts.id ?? newId('job');
      await insertJob(tx, kind, payload, { ...opts, id }).execute();
      return id;
    },
    enqueueOnce,

    async claim(kinds, workerId, leaseMs, fairness, scope) {
      const [job] = await claimMany(kinds, workerId, leaseMs, 1, fairness, scope);
      return job ?? null;
    },
    claimMany,

    async extend(jobId, workerId, leaseMs) {
      const res = await db
        .updateTable('jobs')
        .set({ lease_until: new Date(clock.now().getTime() + leaseMs).toISOString(), updated_at: now() })
        .where('id', '=', jobId)
        .where('locked_by', '=', workerId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    async complete(jobId, workerId) {
      const res = await db
        .updateTable('jobs')
        .set({ status: 'done', lease_until: null, updated_at: now() })
        .where('id', '=', jobId)
        .where('locked_by', '=', workerId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    async fail(jobId, workerId, error, retryAt) {
      const res = await db
        .updateTable('jobs')
        .set({
          status: retryAt ? 'queued' : 'failed',
          run_at: retryAt ? retryAt.toISOString() : now(),
          lease_until: null,
          locked_by: null,
          last_error: error.slice(0, 4000),
          updated_at: now(),
        })
        .where('id', '=', jobId)
        .where('locked_by', '=', workerId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    async release(jobId, workerId) {
      const res = await db
        .updateTable('jobs')
        .set({
          status: 'queued',
          attempts: sql`attempts - 1`,
          lease_until: null,
          locked_by: null,
          updated_at: now(),
        })
        .where('id', '=', jobId)
        .where('locked_by', '=', workerId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },

    notify(kind) {
      bus.emit('job', kind);
      remote?.publish(JOBS_CHANNEL, kind);
    },
    onNotify(listener) {
      // Listen on the database only once something in this process waits for jobs.
      unlisten ??= remote?.subscribe(JOBS_CHANNEL, (kind) => {
        if (kind) bus.emit('job', kind);
      });
      bus.on('job', listener);
      return () => bus.off('job', listener);
    },
  };
}
