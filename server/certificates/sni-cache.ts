import { createSecureContext, type SecureContext } from 'node:tls';
import type { Deps } from '../services/deps.ts';
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
 * must not cost a query and a key decryption. Concurrent handshakes for one name share a load.
 */
export function createSniCache(
  deps: Pick<Deps, 'db' | 'cipher' | 'log'>,
  opts: SniCacheOptions = {},
): SniCache {
  const ttlMs = opts.ttlMs ?? 5 * 60_000;
  const missTtlMs = opts.missTtlMs ?? 10_000;
  const maxEntries = opts.maxEntries ?? 10_000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { at: number; value: Promise<SecureContext | null> }>();

  const load = async (name: string): Promise<SecureContext | null> => {
    const cert = await loadCertificateForHost(deps, name);
    if (!cert) return null;
    if (Date.parse(cert.notAfter) <= now()) {
      deps.log.warn({ domain: name, notAfter: cert.notAfter }, 'serving an expired certificate');
    }
    return createSecureContext({ cert: cert.certPem, key: cert.keyPem });
  };

  const get = async (name: string): Promise<SecureContext | null> => {
    const t = now();
    const hit = cache.get(name);
    if (hit) {
      const ctx = await hit.value.catch(() => undefined);
      // Still the entry looked at (not replaced meanwhile) and still fresh for what it holds.
      if (ctx !== undefined && t - hit.at < (ctx ? ttlMs : missTtlMs)) return ctx;
      if (cache.get(name) === hit) cache.delete(name);
    }
    const pending = cache.get(name);
    if (pending) return pending.value;
    const value = load(name);
    cache.set(name, { at: t, value });
    // A failed load (database down) is not remembered.
    value.catch(() => {
      if (cache.get(name)?.value === value) cache.delete(name);
    });
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return value;
  };

  return {
    contextFor: (servername) => get(servername.trim().toLowerCase().replace(/\.$/, '')),
    invalidate(servername) {
      if (servername === undefined) cache.clear();
      else cache.delete(servername.toLowerCase());
    },
  };
}
