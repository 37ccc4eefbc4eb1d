import type { DomainCertificate } from '../../../../api/schemas/certificates.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { findDomain } from '../domains/find-domain.ts';

/** A domain's certificate state: what is served, and why the last request failed if it did. */
export async function getDomainCertificate(
  deps: Deps,
  actor: Actor,
  projectId: string,
  host: string,
): Promise<DomainCertificate> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const domain = await findDomain(deps, project.id, host);
  const cert = await deps.db
    .selectFrom('certificates')
    .select(['issuer', 'self_signed', 'not_before', 'not_after', 'cert_pem'])
    .where('domain_id', '=', domain.id)
    .executeTakeFirst();
  return {
    domain: domain.domain,
    sslStatus: domain.ssl_status,
    sslError: domain.ssl_error,
    certificate: cert
      ? {
          issuer: cert.issuer,
          selfSigned: cert.self_signed === 1,
          notBefore: cert.not_before,
          notAfter: cert.not_after,
          pem: cert.cert_pem,
        }
      : null,
  };
}
