import type { Deps } from '../../../platform/deps/deps.ts';
import { DELIVERY_JOB, recordEvent } from '../../webhooks/index.ts';
import { orderCertificate } from './acme-issuer.ts';
import { signalCertificateChange } from './certificate-signal.ts';
import { saveCertificate } from './certificate-store.ts';
import type { IssuedCertificate } from './issued-certificate.ts';
import { createSelfSignedCertificate } from './self-signed.ts';

/** Where certificates come from; tests may pass their own. */
export type CertificateSource = (deps: Deps, domain: string) => Promise<IssuedCertificate>;

/** SLIPWAY_ACME_DIRECTORY when set; else a self-signed certificate, with a warning that says so. */
export const defaultSource: CertificateSource = async (deps, domain) => {
  if (deps.config.acmeDirectory) return orderCertificate(deps, domain);
  deps.log.warn(
    { domain },
    `No SLIPWAY_ACME_DIRECTORY is set: issued a self-signed certificate for ${domain}, for local use only (browsers will warn). Set SLIPWAY_ACME_DIRECTORY to get certificates from an ACME CA such as Let's Encrypt.`,
  );
  return await createSelfSignedCertificate(domain, deps.clock.now());
};

export type IssueOutcome = 'issued' | 'failed' | 'skipped';

/**
 * Gets a certificate for a verified domain and makes it the one served: the certificate,
 * `sslStatus: active` and the `domain.ssl.issued` event commit together. A failure is recorded
 * as `ssl_error`; `sslStatus` becomes `failed` unless a still valid certificate keeps serving
 * (a failed renewal). A domain removed or not verified is skipped.
 */
export async function issueCertificate(
  deps: Deps,
  domainId: string,
  source: CertificateSource = defaultSource,
): Promise<IssueOutcome> {
  const domain = await deps.db
    .selectFrom('domains')
    .innerJoin('projects', 'projects.id', 'domains.project_id')
    .select(['domains.id', 'domains.domain', 'domains.project_id', 'domains.status'])
    .where('domains.id', '=', domainId)
    .where('projects.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!domain || domain.status !== 'verified') return 'skipped';

  let cert: IssuedCertificate;
  try {
    cert = await source(deps, domain.domain);
  } catch (err) {
    const reason = `The certificate request for ${domain.domain} failed: ${(err as Error).message}`.slice(
      0,
      2000,
    );
    deps.log.warn({ err, domain: domain.domain }, 'certificate request failed');
    await recordFailure(deps, domainId, reason);
    return 'failed';
  }

  const outcome = await deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.now().toISOString();
    const res = await tx
      .updateTable('domains')
      .set({ ssl_status: 'active', ssl_error: null, updated_at: now })
      .where('id', '=', domainId)
      .where('status', '=', 'verified')
      .executeTakeFirst();
    // Removed while the CA was busy: nothing to serve it for.
    if (Number(res.numUpdatedRows) !== 1) return { saved: false, deliveries: 0 };
    await saveCertificate(tx, deps, domain, cert);
    const deliveries = await recordEvent(tx, deps, domain.project_id, 'domain.ssl.issued', {
      domainId: domain.id,
      projectId: domain.project_id,
      domain: domain.domain,
      status: 'verified',
      sslStatus: 'active',
    });
    return { saved: true, deliveries };
  });
  if (!outcome.saved) return 'skipped';
  if (outcome.deliveries > 0) deps.queue.notify(DELIVERY_JOB);
  signalCertificateChange(deps, domain.domain);
  deps.log.info(
    { domain: domain.domain, issuer: cert.issuer, notAfter: cert.notAfter.toISOString() },
    'certificate issued',
  );
  return 'issued';
}

/** Records why a request failed; a still valid certificate keeps the domain `active`. */
export async function recordFailure(deps: Deps, domainId: string, reason: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  const valid = await deps.db
    .selectFrom('certificates')
    .select('domain_id')
    .where('domain_id', '=', domainId)
    .where('not_after', '>', now)
    .executeTakeFirst();
  await deps.db
    .updateTable('domains')
    .set({ ssl_status: valid ? 'active' : 'failed', ssl_error: reason, updated_at: now })
    .where('id', '=', domainId)
    .execute();
}
