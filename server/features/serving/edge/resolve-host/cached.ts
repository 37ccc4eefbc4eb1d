import { lookup } from './look-up.ts';
import { projectOf, type Resolution } from './resolution.ts';
import { current, lifetime, outdated, type Entry, type ResolverState } from './state.ts';

/**
 * The share of its lifetime after which an answer in use is looked up again in the background:
 * a host with traffic then never waits for the database on its requests, and one without traffic
 * expires as before.
 */
const REFRESH_AFTER = 0.8;
/** How soon a failed background look-up is tried again (by the next request after it). */
const REFRESH_RETRY_MS = 1000;

/** A host's answer from the cache, or looked up and cached (shared while it is looked up). */
export function cached(s: ResolverState, host: string): Promise<Resolution> {
  const hit = s.cache.get(host);
  if (hit) {
    if (hit.settled) touch(s, hit);
    return hit.value;
  }
  const value = lookup(s, host);
  if (s.ttlMs <= 0) return value;
  const entry: Entry = { host, seq: s.seq, value, refreshAt: Infinity };
  s.cache.set(host, entry, { ttl: lifetime(s) });
  s.pending.add(entry);
  value.then(
    (r) => {
      const stale = outdated(s, entry, r);
      endLookup(s, entry);
      // A change came while it was looked up: it may have read the database before it.
      if (stale) {
        if (current(s, entry)) s.cache.delete(host);
        return;
      }
      // Taken out by a change to some other project: back in, unless a newer look-up is.
      if (!current(s, entry) && s.cache.peek(host, { allowStale: true })) return;
      keep(s, entry, r);
    },
    () => {
      endLookup(s, entry);
      // A failed look-up is not remembered.
      if (current(s, entry)) s.cache.delete(host);
    },
  );
  return value;
}

/** A cached answer about to be used: looked up again in the background once it is due. */
export function touch(s: ResolverState, entry: Entry): void {
  if (s.now() >= entry.refreshAt) refresh(s, entry);
}

function endLookup(s: ResolverState, entry: Entry): void {
  s.pending.delete(entry);
  if (s.pending.size === 0) s.changedAt.clear();
}

/** Caches a settled answer for its lifetime (an unknown host's is short) and indexes it. */
function keep(s: ResolverState, entry: Entry, r: Resolution): void {
  entry.settled = r;
  const projectId = projectOf(r);
  if (projectId === null) {
    // An unknown host may become known without a signal here: a short life, no refresh.
    s.cache.set(entry.host, entry, { ttl: s.unknownTtlMs });
    s.unknown.add(entry.host);
    return;
  }
  const ttl = lifetime(s);
  // Replacing another entry disposes of it (and its index) first.
  s.cache.set(entry.host, entry, { ttl });
  entry.refreshAt = s.now() + ttl * REFRESH_AFTER;
  let hosts = s.byProject.get(projectId);
  if (!hosts) s.byProject.set(projectId, (hosts = new Set()));
  hosts.add(entry.host);
}

/**
 * Looks a cached answer up again while it still answers requests. The new answer replaces it
 * unless a routing change came since the look-up started (the change dropped it, or will be
 * looked up afresh) or it is no longer the cached one; after a failed look-up it answers on
 * until it expires, and a request a second later tries again.
 */
function refresh(s: ResolverState, old: Entry): void {
  old.refreshAt = Infinity;
  const next: Entry = { host: old.host, seq: s.seq, value: lookup(s, old.host), refreshAt: Infinity };
  s.pending.add(next);
  next.value.then(
    (r) => {
      const stale = outdated(s, next, r);
      endLookup(s, next);
      if (!stale && current(s, old)) keep(s, next, r);
      // Not kept: due again, should it still answer.
      else old.refreshAt = s.now();
    },
    () => {
      endLookup(s, next);
      old.refreshAt = s.now() + REFRESH_RETRY_MS;
    },
  );
}
