import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';

/**
 * How long an answer is reused. The edge writes its counts once a second, so a reader already
 * sees traffic up to a second late; this adds at most another second for writes made by other
 * processes (writes through this process drop the cache at once).
 */
export const METRICS_FRESH_MS = 1_000;
/** Answers kept per database; the oldest go first. Each is a few hundred bytes. */
export const METRICS_CACHE_ENTRIES = 1_000;

interface Entry {
  generation: number;
  at: number;
  value: unknown;
}

interface State {
  /** Bumped after every committed write to the rollups through this process. */
  generation: number;
  entries: Map<string, Entry>;
}

const states = new WeakMap<Kysely<Database>, State>();

function stateOf(db: Kysely<Database>): State {
  let s = states.get(db);
  if (!s) {
    s = { generation: 0, entries: new Map() };
    states.set(db, s);
  }
  return s;
}

/** Call after a write to the rollups has committed: answers computed before it are not reused. */
export function rollupsChanged(db: Kysely<Database>): void {
  stateOf(db).generation++;
}

/**
 * The answer for `key` computed at most `METRICS_FRESH_MS` ago and after the last write through
 * this process, else `compute()`'s. A dashboard or script polling metrics in a loop then costs
 * one database read per second per question, not one per request: on SQLite every read runs on
 * the event loop the edge shares. `key` must hold everything the answer depends on (project,
 * metrics asked, the rows' ranges).
 */
export async function cachedMetrics<T>(
  db: Kysely<Database>,
  key: string,
  nowMs: number,
  compute: () => Promise<T>,
): Promise<T> {
  const s = stateOf(db);
  const hit = s.entries.get(key);
  if (hit && hit.generation === s.generation && nowMs - hit.at >= 0 && nowMs - hit.at < METRICS_FRESH_MS) {
    return hit.value as T;
  }
  const generation = s.generation;
  const value = await compute();
  s.entries.delete(key);
  s.entries.set(key, { generation, at: nowMs, value });
  if (s.entries.size > METRICS_CACHE_ENTRIES) s.entries.delete(s.entries.keys().next().value!);
  return value;
}
