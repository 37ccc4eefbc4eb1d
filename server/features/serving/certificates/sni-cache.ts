import { LRUCache } from 'lru-cache';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Deps } from '../../../platform/deps/deps.ts';
import { loadCertificateForHost } from './certificate-store.ts';

export interface SniCache {
  /** The TLS context for a server name, or null when it has no certificate. */
  contextFor(servername: string): Promise<SecureContext | null>;
  /** Drops a name's cached context (a new certificate); all names without an argument. */
  invalidate(servername?: string): void;
}

export interface SniCacheOptions {
  /** How long a context is reused; other processes see a renewal this late at most (default 5 min). */
  ttlMs?: number;
  /** How long "no certificate" is remembered, so unknown names do not hit the database each time (default 10 s). */
  missTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/**
 * TLS contexts by server name, loaded from the database on first use and cached: a handshake
 * must not cost a query and a key decryption. Concurrent handshakes for one name share a load;
 * past `maxEntries` the least recently used names go first.
 */
export function createSniCache(
  deps: Pick<Deps, 'db' | 'cipher' | 'log'>,
  opts: SniCacheOptions = {},
): SniCache {
  const ttlMs = opts.ttlMs ?? 5 * 60_000;
  const missTtlMs = opts.missTtlMs ?? 10_000;
  const now = opts.now ?? Date.now;
  /** `false`: the name has no certificate (remembered for `missTtlMs`). */
  const cache = new LRUCache<string, SecureContext | false>({
    max: opts.maxEntries ?? 10_000,
    ttl: ttlMs,
    // Checked on every read: an injected clock moves in jumps.
    ttlResolution: 0,
    // lru-cache takes a start time of 0 for "no start": an injected clock may begin at 0.
    perf: { now: () => now() + 1 },
    fetchMethod: async (name, _stale, { options }) => {
      const cert = await loadCertificateForHost(deps, name);
      if (!cert) {
        options.ttl = missTtlMs;
        return false;
      }
      if (Date.parse(cert.notAfter) <= now()) {
        deps.log.warn({ domain: name, notAfter: cert.notAfter }, 'serving an expired certificate');
      }
      return createSecureContext({ cert: cert.certPem, key: cert.keyPem });
    },
    // A load under way when its name was invalidated still answers its handshake, but is not kept.
    // A failed load (database down) is not remembered either.
    ignoreFetchAbort: true,
  });

  return {
    contextFor: async (servername) =>
      (await cache.fetch(servername.trim().toLowerCase().replace(/\.$/, ''))) || null,
    invalidate(servername) {
      if (servername === undefined) cache.clear();
      else cache.delete(servername.toLowerCase());
    },
  };
}
