import type { Env } from './env-schema.ts';

/** Jobs' leases, the edge's caches, tokens, DNS, webhooks, TLS and ACME. */
export function edgeSettings(env: Env) {
  return {
    jobLeaseMs: env.SLIPWAY_JOB_LEASE,
    /** On shutdown, how long running jobs may finish before they are handed back to the queue. */
    shutdownGraceMs: env.SLIPWAY_SHUTDOWN_GRACE,
    /**
     * How long the edge reuses a host's route; routing changes made through the service drop the
     * routes they touch at once, so this bounds only how long a lost signal goes unseen.
     */
    edgeRouteTtlMs: env.SLIPWAY_EDGE_ROUTE_TTL,
    /**
     * Parsed manifests each edge process keeps, by their size as stored: they must hold every
     * site it serves, or traffic spread over them reads each manifest again on each request.
     */
    edgeManifestCacheBytes: env.SLIPWAY_EDGE_MANIFEST_CACHE,
    /** Small files' bytes each edge process keeps in memory (files of up to 256 KiB). */
    edgeFileCacheBytes: env.SLIPWAY_EDGE_FILE_CACHE,
    /** Most bytes of one server app's writable folders (Next.js's .next: ISR, data cache, images). */
    appCacheBytes: env.SLIPWAY_APP_CACHE_SIZE,
    /** How long a token lookup is reused (0: never); changes made through the service drop it at once. */
    tokenCacheTtlMs: env.SLIPWAY_TOKEN_CACHE_TTL,
    dnsServers: env.SLIPWAY_DNS_SERVERS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    webhookAllowPrivate: env.SLIPWAY_WEBHOOK_ALLOW_PRIVATE,
    /** The edge's HTTPS listener (custom domains, by SNI); undefined: none. */
    edgeTlsPort: env.SLIPWAY_EDGE_TLS_PORT === undefined ? undefined : Number(env.SLIPWAY_EDGE_TLS_PORT),
    /** ACME directory certificates are ordered from; undefined: self-signed certificates. */
    acmeDirectory: env.SLIPWAY_ACME_DIRECTORY,
    acmeEmail: env.SLIPWAY_ACME_EMAIL,
    /** Extra CA to trust for the ACME server's own HTTPS (a test CA such as pebble's). */
    acmeCaFile: env.SLIPWAY_ACME_CA_FILE,
    /** How long a pending (unverified) domain claim lasts before it is removed. */
    domainClaimTtlMs: env.SLIPWAY_DOMAIN_CLAIM_TTL,
  };
}
