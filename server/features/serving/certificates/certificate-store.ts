import type { Kysely } from 'kysely';
import type { Deps } from '../../../platform/deps/deps.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { IssuedCertificate } from './issued-certificate.ts';

/** Stores (or replaces) a domain's certificate; the key is encrypted at rest. `db` may be a transaction. */
export async function saveCertificate(
  db: Kysely<Database>,
  deps: Pick<Deps, 'cipher' | 'clock'>,
  domain: { id: string; domain: string },
  cert: IssuedCertificate,
): Promise<void> {
  const now = deps.clock.now().toISOString();
  const values = {
    domain: domain.domain,
    cert_pem: cert.certPem,
    key_ciphertext: deps.cipher.encrypt(cert.keyPem),
    issuer: cert.issuer,
    self_signed: cert.selfSigned ? 1 : 0,
    not_before: cert.notBefore.toISOString(),
    not_after: cert.notAfter.toISOString(),
    updated_at: now,
  };
  await db
    .insertInto('certificates')
    .values({ domain_id: domain.id, created_at: now, ...values })
    .onConflict((oc) => oc.column('domain_id').doUpdateSet(values))
    .execute();
}

export interface ServedCertificate {
  certPem: string;
  keyPem: string;
  notAfter: string;
}

/** The certificate to serve for a host name: only a verified domain's; null when there is none. */
export async function loadCertificateForHost(
  deps: Pick<Deps, 'db' | 'cipher'>,
  host: string,
): Promise<ServedCertificate | null> {
  const row = await deps.db
    .selectFrom('certificates as c')
    .innerJoin('domains as d', 'd.id', 'c.domain_id')
    .select(['c.cert_pem', 'c.key_ciphertext', 'c.not_after'])
    .where('d.domain', '=', host)
    .where('d.status', '=', 'verified')
    .executeTakeFirst();
  if (!row) return null;
  return { certPem: row.cert_pem, keyPem: deps.cipher.decrypt(row.key_ciphertext), notAfter: row.not_after };
}
