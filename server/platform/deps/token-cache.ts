import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import type { Notifier } from '../store/notify.ts';

/** "What a token lookup answers changed": every process drops the tokens it remembers. */
export const TOKENS_CHANNEL = 'slipway_tokens';

/**
 * Remembers recent token lookups for `SLIPWAY_TOKEN_CACHE_TTL` (default a second): under load one lookup serves thousands of
 * requests. A revocation, plan or membership change drops everything at once, in this process
 * directly and in the others through the notifier (LISTEN/NOTIFY on PostgreSQL), so a revoked
 * token stops working at once and a new plan applies at once; only a change made outside the
 * service (SQL by hand) waits for the expiry.
 * Unknown tokens are never remembered: a new token works at once, and guessing fills nothing.
 */
/** What a token lookup found (server/platform/http/auth.ts). */
export interface CachedToken {
  tokenId: string;
  userId: string;
  email: string;
  lastUsedAt: string | null;
  /** The best plan among the owner's organizations: 1 free, 2 pro, 3 enterprise. */
  rank: number;
  /** An OIDC token's project, role and end (null for a person's token). */
  projectId: string | null;
  scopeRole: 'viewer' | 'developer' | null;
  expiresAt: string | null;
  /** How the token was made: only `github_app` may use the App's event queue. */
  source: 'user' | 'oidc' | 'github_app';
}

export interface TokenCache {
  get(tokenHash: string): CachedToken | undefined;
  set(tokenHash: string, value: CachedToken): void;
  /**
   * Call after a change to what a lookup answers committed: a token revoked, an organization's
   * plan changed, a membership added or removed (the rate-limit tier is the owner's best plan).
   */
  invalidate(): void;
}

/** Most token lookups kept at once. */
const MAX_TOKENS = 10_000;

export function createTokenCache(
  notifier: Notifier,
  ttlMs: number,
  now = () => performance.now(),
): TokenCache {
  // Least recently used lookups go first past the bound (no cliff where everything is forgotten);
  // the time to live is checked on every read against `now` (ttlResolution 0).
  const entries = new LRUCache<string, CachedToken>({
    max: MAX_TOKENS,
    ttl: Math.max(ttlMs, 1),
    ttlResolution: 0,
    perf: { now },
  });
  let unsubscribe: (() => void) | undefined;
  const listen = () => {
    // A null payload means notifications may have been missed: forget everything too.
    unsubscribe ??= notifier.crossProcess
      ? notifier.subscribe(TOKENS_CHANNEL, () => entries.clear())
      : () => {};
  };
  return {
    get(tokenHash) {
      listen();
      return entries.get(tokenHash);
    },
    set(tokenHash, value) {
      if (ttlMs <= 0) return;
      entries.set(tokenHash, value);
    },
    invalidate() {
      entries.clear();
      notifier.publish(TOKENS_CHANNEL, '');
    },
  };
}
