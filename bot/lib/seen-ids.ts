/**
 * Delivery ids seen recently, so a replayed delivery is ignored. An id only has to be kept as
 * long as its delivery could still pass the timestamp check (5 minutes either way), so entries
 * expire after `ttlMs` and memory stays bounded.
 */
export interface SeenIds {
  /** True when `id` was already seen (and not expired); otherwise records it and returns false. */
  checkAndAdd(id: string): boolean;
  /** Forgets `id`: its work failed, so seeing it again must do it again. */
  forget(id: string): void;
}

export function createSeenIds(now: () => number, ttlMs = 15 * 60_000, max = 50_000): SeenIds {
  // A Map iterates in insertion order, so the oldest entries come first when pruning.
  const seen = new Map<string, number>();
  const prune = (at: number) => {
    for (const [id, expires] of seen) {
      if (expires > at && seen.size <= max) break;
      seen.delete(id);
    }
  };
  return {
    checkAndAdd(id) {
      const at = now();
      prune(at);
      const expires = seen.get(id);
      if (expires !== undefined && expires > at) return true;
      seen.set(id, at + ttlMs);
      return false;
    },
    forget(id) {
      seen.delete(id);
    },
  };
}
