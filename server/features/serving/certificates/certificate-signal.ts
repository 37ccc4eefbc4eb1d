import type { Deps } from '../../../platform/deps/deps.ts';

/** Notifier channel of "this domain has a new certificate"; the payload is the host name. */
export const CERTIFICATE_CHANNEL = 'slipway_certificates';

/**
 * Tells every TLS listener that `domain` has a new certificate, so it drops its cached one at
 * once: in this process, and in the others through LISTEN/NOTIFY on PostgreSQL. A lost signal
 * costs the cache's expiry, never correctness. Call after the certificate has committed.
 */
export function signalCertificateChange(deps: Pick<Deps, 'store'>, domain: string): void {
  deps.store.notifier.publish(CERTIFICATE_CHANNEL, domain);
}

/** `domain` is null when signals may have been missed (a reconnect): drop everything cached. */
export function onCertificateChange(
  deps: Pick<Deps, 'store'>,
  listener: (domain: string | null) => void,
): () => void {
  return deps.store.notifier.subscribe(CERTIFICATE_CHANNEL, listener);
}
