import type { LRUCache } from 'lru-cache';
import type { LookupDeps } from './look-up.ts';
import { projectOf, type Resolution } from './resolution.ts';

/** A cached answer: shared by concurrent requests while it is being looked up. */
export interface Entry {
  host: string;
  /** The count of routing changes when the look-up started. */
  seq: number;
  value: Promise<Resolution>;
  settled?: Resolution;
  /**
   * When a request for it starts looking it up again in the background; Infinity while that
   * look-up is on its way, and for answers never looked up ahead (unsettled, unknown hosts).
   */
  refreshAt: number;
}

/**
 * What one host resolver keeps (createHostResolver makes it once), passed to the functions that
 * answer and forget rather than closed over.
 */
export interface ResolverState extends LookupDeps {
  /** How long an answer is reused, in ms (ResolverOptions.ttlMs); 0: never. */
  ttlMs: number;
  /** How long an unknown-host answer is reused, in ms. */
  unknownTtlMs: number;
  now: () => number;
  /** The port of a deployment's running server process, if any (ResolverOptions.runtimePort). */
  runtimePort: ((deploymentId: string) => number | undefined) | undefined;
  cache: LRUCache<string, Entry>;
  /** The hosts whose settled answer names each project: what `invalidate(projectId)` drops. */
  byProject: Map<string, Set<string>>;
  /** Hosts answered `unknown`: a new domain or deployment may make them known. */
  unknown: Set<string>;
  /**
   * Answers still being looked up: their project is not known yet. A routing change takes them
   * out of the cache (later requests look up afresh), and when one settles it is kept only if
   * no change since it started names its project (`changedAt`).
   */
  pending: Set<Entry>;
  /** Routing changes so far; when each project last changed; when everything or any did. */
  seq: number;
  changedAt: Map<string, number>;
  allChangedAt: number;
  anyChangedAt: number;
}

/**
 * Each answer lives between 90% and 100% of `ttlMs`, at random: hosts looked up together (an
 * edge starting under load) then expire spread over a tenth of the lifetime instead of all at
 * once, so their next look-ups do not reach the database in one burst.
 */
export const lifetime = (s: ResolverState) => Math.max(1, Math.round(s.ttlMs * (0.9 + 0.1 * Math.random())));

/** True when a change since the look-up started may make its answer out of date. */
export function outdated(s: ResolverState, entry: Entry, r: Resolution): boolean {
  if (s.allChangedAt > entry.seq) return true;
  const projectId = projectOf(r);
  return projectId === null ? s.anyChangedAt > entry.seq : (s.changedAt.get(projectId) ?? 0) > entry.seq;
}

/** Takes an entry out of the indexes (expired, evicted, replaced or deleted from the cache). */
export function unindex(s: ResolverState, entry: Entry): void {
  if (!entry.settled) return;
  const projectId = projectOf(entry.settled);
  if (projectId === null) {
    s.unknown.delete(entry.host);
    return;
  }
  const hosts = s.byProject.get(projectId);
  hosts?.delete(entry.host);
  if (hosts?.size === 0) s.byProject.delete(projectId);
}

/** The entry cached for its host, fresh or not (undefined once replaced or dropped). */
export const current = (s: ResolverState, entry: Entry) =>
  s.cache.peek(entry.host, { allowStale: true }) === entry;
