import type { JobHandler } from './worker.ts';
import type { Deps } from '../deps/deps.ts';
import { every } from '../../core/every.ts';
import { decodeJson } from '../../core/json-column.ts';
import { z } from 'zod';

/** A job that runs once per interval across every worker process sharing the database. */
export interface PeriodicJob extends JobHandler {
  intervalMs: number;
}

/** Start of the interval slot `at` falls in; slots are aligned to the Unix epoch. */
export const slotStart = (at: Date, intervalMs: number): Date =>
  new Date(Math.floor(at.getTime() / intervalMs) * intervalMs);

/**
 * The id of a slot's job. It is deterministic on purpose: every process that asks for the run
 * of a slot inserts the same primary key, so at most one run per slot exists however many
 * workers race, without any lock.
 */
export const slotJobId = (kind: string, slot: Date): string => `job_${kind}_${slot.toISOString()}`;

/** What a periodic job's payload holds. */
export interface SlotPayload {
  /** Start of the slot the run is for, ISO. */
  slot: string;
}

type SchedulerDeps = Pick<Deps, 'db' | 'clock' | 'queue' | 'log'>;

/**
 * Inserts the job of the current slot unless it exists. Written as a row rather than through
 * `queue.enqueue`, whose random ids could not deduplicate. Returns true when this call added it.
 */
export async function ensureSlotJob(deps: SchedulerDeps, job: Pick<PeriodicJob, 'kind' | 'intervalMs'>) {
  const now = deps.clock.now();
  const slot = slotStart(now, job.intervalMs);
  const at = now.toISOString();
  const payload: SlotPayload = { slot: slot.toISOString() };
  const res = await deps.db
    .insertInto('jobs')
    .values({
      id: slotJobId(job.kind, slot),
      kind: job.kind,
      payload: JSON.stringify(payload),
      status: 'queued',
      run_at: slot.toISOString(),
      attempts: 0,
      // No retry: the next slot is the retry, and a late run of an old slot would be stale.
      max_attempts: 1,
      lease_until: null,
      locked_by: null,
      last_error: null,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  const added = Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  if (added) deps.queue.notify(job.kind);
  return added;
}

/** True when a run is for a slot long gone (the workers were down): skip it, the current slot runs. */
export function isStale(payload: string, intervalMs: number, now: Date): boolean {
  try {
    const { slot } = decodeJson(z.object({ slot: z.string() }), payload, 'A periodic job’s payload');
    return now.getTime() - Date.parse(slot) > 2 * intervalMs;
  } catch {
    return false;
  }
}

export interface PeriodicScheduler {
  /** Ends the timers; resolves once the checks under way have ended. */
  stop(): Promise<void>;
  /** Makes sure every job's current slot exists now (tests, start-up). */
  check(): Promise<void>;
}

/**
 * Keeps the current slot of each job inserted: at start, then a few times per interval (at most
 * every 15 s), so a slot's run starts soon after the slot begins. Any number of processes may
 * run it; the slot ids make the extra inserts no-ops.
 */
export function startPeriodicScheduler(deps: SchedulerDeps, jobs: PeriodicJob[]): PeriodicScheduler {
  // The slot each job is known to have a row for: no need to write again until the next slot.
  const known = new Map<string, number>();
  const check = async (job: PeriodicJob) => {
    const slot = slotStart(deps.clock.now(), job.intervalMs).getTime();
    if (known.get(job.kind) === slot) return;
    try {
      await ensureSlotJob(deps, job);
      known.set(job.kind, slot);
    } catch (err) {
      deps.log.warn({ err, kind: job.kind }, 'could not schedule a periodic job; retrying');
    }
  };
  const timers = jobs.map((job) =>
    every(Math.min(15_000, Math.max(250, Math.floor(job.intervalMs / 4))), () => check(job), {
      clock: deps.clock,
      log: deps.log,
      name: `scheduling the periodic job ${job.kind}`,
    }),
  );
  const checkAll = async () => {
    await Promise.all(jobs.map(check));
  };
  void checkAll();
  return {
    async stop() {
      await Promise.all(timers.map((t) => t.stop()));
    },
    check: checkAll,
  };
}
