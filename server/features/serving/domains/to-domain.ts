import type { Selectable } from 'kysely';
import type { Domain } from '../../../../api/schemas/domains.ts';
import type { DomainsTable } from '../../../platform/store/schema.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { claimExpiresAt } from './claim-expiry.ts';
import { dnsRecordsFor } from './dns-records.ts';

export type DomainRow = Selectable<DomainsTable>;

/** Row -> wire shape; the DNS records are derived, so they follow configuration changes. */
export function toDomain(
  deps: Pick<Deps, 'config'>,
  project: { production_host: string },
  row: DomainRow,
): Domain {
  return {
    id: row.id,
    projectId: row.project_id,
    domain: row.domain,
    status: row.status,
    sslStatus: row.ssl_status,
    verifiedAt: row.verified_at,
    expiresAt: claimExpiresAt(row, deps.config.domainClaimTtlMs),
    createdAt: row.created_at,
    dnsRecords: dnsRecordsFor(deps.config, project.production_host, row.domain, row.verification_token),
  };
}
