import { sql, type Kysely } from 'kysely';
import type { DialectHelpers } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';

/**
 * How a kind's jobs share the workers between their owners (builds: organizations). Each job
 * carries its owner as `fair_key` (set at enqueue); a claim serves the owner with the fewest
 * jobs running, then the one served longest ago, and skips owners at their limit.
 */
export interface Fairness {
  /** The most jobs of each key that may run at once, everywhere (null: no bound of its own). */
  limits(db: Kysely<Database>, keys: string[]): Promise<Map<string, number | null>>;
}

/** Jobs enqueued without a key (before keys existed) share this one, without a limit. */
export const NO_KEY = '';

export interface Turn {
  key: string;
  /** Its jobs running now under a live lease, in every process. */
  running: number;
  /** The most that may run at once; null: no bound of its own. */
  limit: number | null;
  /** When one of its jobs was last claimed (ISO), or null. */
  lastClaimedAt: string | null;
  /** When its oldest runnable job became due (ISO). */
  firstDueAt: string;
}

/**
 * The order in which owners with runnable jobs get the next free slot: those at their limit not
 * at all; fewer running first (so one owner's queue cannot take every slot while another
 * waits), then served longest ago (round robin when each has the same share), then waiting
 * longest.
 */
export function turnOrder(turns: readonly Turn[]): string[] {
  return turns
    .filter((t) => t.limit === null || t.running < t.limit)
    .sort(
      (a, b) =>
        a.running - b.running ||
        compareTimes(a.lastClaimedAt, b.lastClaimedAt) ||
        a.firstDueAt.localeCompare(b.firstDueAt) ||
        a.key.localeCompare(b.key),
    )
    .map((t) => t.key);
}

/** Never served sorts first. */
function compareTimes(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a.localeCompare(b);
}

const ownKey = sql<string>`coalesce(fair_key, '')`;

/**
 * Reads, in the claiming transaction, the owners with runnable jobs of `kinds` and how each has
 * been served. Reads open jobs only (the partial indexes of migrations 014 and 021), plus the
 * owners' latest claims.
 */
export async function readTurns(
  tx: Kysely<Database>,
  kinds: string[],
  at: string,
  fairness: Fairness,
): Promise<Turn[]> {
  const due = await tx
    .selectFrom('jobs')
    .select([ownKey.as('key'), sql<string>`min(run_at)`.as('first_due_at')])
    .where(sql<boolean>`status in ('queued', 'running')`)
    .where('kind', 'in', kinds)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', at)]),
        eb.and([eb('status', '=', 'running'), eb('lease_until', '<', at)]),
      ]),
    )
    .groupBy(ownKey)
    .execute();
  if (due.length === 0) return [];
  const keys = due.map((d) => d.key);
  const running = await tx
    .selectFrom('jobs')
    .select([ownKey.as('key'), sql<number>`count(*)`.as('n')])
    .where(sql<boolean>`status in ('queued', 'running')`)
    .where('status', '=', 'running')
    .where('kind', 'in', kinds)
    .where('lease_until', '>=', at)
    .groupBy(ownKey)
    .execute();
  const named = keys.filter((k) => k !== NO_KEY);
  const served =
    named.length === 0
      ? []
      : await tx
          .selectFrom('jobs')
          .select(['fair_key as key', sql<string | null>`max(claimed_at)`.as('last')])
          .where('fair_key', 'in', named)
          .where('kind', 'in', kinds)
          .groupBy('fair_key')
          .execute();
  const limits = named.length === 0 ? new Map<string, number | null>() : await fairness.limits(tx, named);
  const runningOf = new Map(running.map((r) => [r.key, Number(r.n)]));
  const servedOf = new Map(served.map((s) => [s.key ?? NO_KEY, s.last]));
  return due.map((d) => ({
    key: d.key,
    running: runningOf.get(d.key) ?? 0,
    limit: d.key === NO_KEY ? null : (limits.get(d.key) ?? null),
    lastClaimedAt: servedOf.get(d.key) ?? null,
    firstDueAt: d.first_due_at,
  }));
}

/**
 * On PostgreSQL, claims of one owner wait for each other until the claiming transaction ends, so
 * two workers cannot both see an owner below its limit and both start one of its jobs; the
 * caller counts the owner's running jobs again once it holds this. SQLite runs one write
 * transaction at a time, which serialises claims already.
 */
export async function lockOwner(tx: Kysely<Database>, dialect: DialectHelpers, key: string): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtext(${`slipway.jobs.${key}`}))`.execute(tx);
}

/** Jobs of `key` running now under a live lease (read again after `lockOwner`). */
export async function runningOf(
  tx: Kysely<Database>,
  kinds: string[],
  key: string,
  at: string,
): Promise<number> {
  const row = await tx
    .selectFrom('jobs')
    .select(sql<number>`count(*)`.as('n'))
    .where(sql<boolean>`status in ('queued', 'running')`)
    .where('status', '=', 'running')
    .where('kind', 'in', kinds)
    .where('lease_until', '>=', at)
    .where((eb) => (key === NO_KEY ? eb('fair_key', 'is', null) : eb('fair_key', '=', key)))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
