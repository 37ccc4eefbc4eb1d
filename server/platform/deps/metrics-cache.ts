import { LRUCache } from 'lru-cache';

/**
 * How long an answer is reused. The edge writes its counts once a second, so a reader already
 * sees traffic up to a second late; this adds at most another second for writes made by other
 * processes (writes through this process drop the cache at once).
 */
export const METRICS_FRESH_MS = 1_000;
/** Answers kept; the least recently used go first. Each is a few hundred bytes. */
export const METRICS_CACHE_ENTRIES = 1_000;

/** Recent metrics answers of this process (`Deps.metrics`). */
export interface MetricsCache {
  /**
   * The answer for `key` computed at most `METRICS_FRESH_MS` ago and after the last write through
   * this process, else `compute()`'s; concurrent calls for one key share one computation. A
   * dashboard or script polling metrics in a loop then costs one database read per second per
   * question, not one per request: on SQLite every read runs on the event loop the edge shares.
   * `key` must hold everything the answer depends on (project, metrics asked, the rows' ranges).
   */
  get<T extends object>(key: string, compute: () => Promise<T>): Promise<T>;
  /** Call after a write to the rollups has committed: answers computed before it are not reused. */
  rollupsChanged(): void;
}

/** `now` in milliseconds: the service's clock, so a test's clock moves answers' ages too. */
export function createMetricsCache(now: () => number): MetricsCache {
  const cache = new LRUCache<string, object, () => Promise<object>>({
    max: METRICS_CACHE_ENTRIES,
    // Stale once older than ttl: fresh is younger than METRICS_FRESH_MS, in whole milliseconds.
    ttl: METRICS_FRESH_MS - 1,
    // Checked on every read: an injected clock moves in jumps.
    ttlResolution: 0,
    perf: { now },
    fetchMethod: (_key, _stale, { context }) => context(),
    // A computation under way when the rollups changed still answers its caller, but is not kept
    // (`clear` aborts it): it may have read them before the change.
    ignoreFetchAbort: true,
  });
  return {
    async get<T extends object>(key: string, compute: () => Promise<T>) {
      return (await cache.fetch(key, { context: compute })) as T;
    },
    rollupsChanged: () => cache.clear(),
  };
}
