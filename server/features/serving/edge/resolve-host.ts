import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../../platform/config.ts';
import type { Database } from '../../../platform/store/schema.ts';
import { cached, touch } from './resolve-host/cached.ts';
import { invalidate } from './resolve-host/invalidate.ts';
import type { Resolution } from './resolve-host/resolution.ts';
import { unindex, type Entry, type ResolverState } from './resolve-host/state.ts';

// The resolver's pieces, each in a file of its own under resolve-host/: what an answer is
// (resolution.ts), looking a host up in the database (look-up.ts, label-rows.ts, to-target.ts),
// the cache of answers with its background refresh (cached.ts, state.ts) and routing changes
// (invalidate.ts). What they share is one ResolverState, passed along.
export {
  guardOf,
  protectionOf,
  type Guarded,
  type Resolution,
  type Target,
  type TargetProtection,
} from './resolve-host/resolution.ts';

export interface HostResolver {
  /** Resolves a raw Host header (any case, with or without a port). */
  resolve(host: string | undefined): Promise<Resolution>;
  /**
   * The same answer without waiting, when a fresh one is cached; undefined otherwise (then call
   * `resolve`). The edge's synchronous fast path.
   */
  peek(host: string | undefined): Resolution | undefined;
  /**
   * Forgets cached answers so that a routing change applies at once. With a project id: every
   * answer that names the project, every answer still being looked up, and every unknown-host
   * answer (the change may have given the project a host). Without one (a signal may have been
   * missed): everything.
   */
  invalidate(projectId?: string | null): void;
}

export interface ResolverDeps {
  db: Kysely<Database>;
  config: Pick<Config, 'domain' | 'publicEdgeUrl'>;
}

export interface ResolverOptions {
  /**
   * How long an answer is reused, in ms (default 60 s; 0: never). Routing changes drop the
   * answers they touch at once (`invalidate`), so this only bounds how long a lost signal, or a
   * change made outside the service, goes unseen.
   */
  ttlMs?: number;
  /** How long an unknown-host answer is reused, in ms (default the lesser of 5 s and `ttlMs`). */
  unknownTtlMs?: number;
  /** The port of a deployment's running server process, if any (the runtime supervisor's). */
  runtimePort?: (deploymentId: string) => number | undefined;
  /** Milliseconds clock, injected for tests. */
  now?: () => number;
  /** Most hosts kept in the cache (default 50,000); the least recently used go first. */
  maxEntries?: number;
}

/** `Example.COM:3001` -> `example.com`; `[::1]:3001` -> `[::1]`; a trailing dot is dropped. */
export function normalizeHost(raw: string | undefined): string {
  let host = (raw ?? '').trim().toLowerCase();
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    host = close === -1 ? host : host.slice(0, close + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon !== -1) host = host.slice(0, colon);
  }
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

export function createHostResolver(deps: ResolverDeps, opts: ResolverOptions = {}): HostResolver {
  const ttlMs = opts.ttlMs ?? 60_000;
  const suffixes = [deps.config.domain];
  if (deps.config.publicEdgeUrl) suffixes.push(new URL(deps.config.publicEdgeUrl).hostname.toLowerCase());
  const s: ResolverState = {
    db: deps.db,
    suffixes,
    ttlMs,
    unknownTtlMs: Math.min(opts.unknownTtlMs ?? 5000, ttlMs),
    now: opts.now ?? (() => performance.now()),
    runtimePort: opts.runtimePort,
    cache: new LRUCache<string, Entry>({
      max: opts.maxEntries ?? 50_000,
      ttl: Math.max(ttlMs, 1),
      // Checked on every read: an injected clock moves in jumps.
      ttlResolution: 0,
      ...(opts.now ? { perf: { now: opts.now } } : {}),
      // Expired, evicted, replaced or deleted: it no longer answers for its project.
      dispose: (entry) => unindex(s, entry),
    }),
    byProject: new Map(),
    unknown: new Set(),
    pending: new Set(),
    seq: 0,
    changedAt: new Map(),
    allChangedAt: 0,
    anyChangedAt: 0,
  };

  /** Adds the port of the deployment's running server process, if any. */
  const withPort = (r: Resolution): Resolution => {
    if (r.kind !== 'target') return r;
    const port = s.runtimePort?.(r.target.deploymentId);
    return port === undefined ? r : { kind: 'target', target: { ...r.target, runtime: { port } } };
  };

  return {
    async resolve(rawHost) {
      const host = normalizeHost(rawHost);
      if (!host) return { kind: 'unknown' };
      return withPort(await cached(s, host));
    },
    peek(rawHost) {
      const host = normalizeHost(rawHost);
      if (!host) return { kind: 'unknown' };
      const entry = s.cache.get(host);
      if (!entry?.settled) return undefined;
      touch(s, entry);
      return withPort(entry.settled);
    },
    invalidate(projectId) {
      invalidate(s, projectId);
    },
  };
}

/**
 * Whether a request has more than one Host field (from its raw fields: Node keeps the first in
 * `headers`). Such a request is refused with 400 (RFC 9112 3.2): a cache or proxy in front that
 * read the other one would store or route one site's answer as another's.
 */
export function severalHosts(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}
