import type { Kysely } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import type { Clock } from '../../../core/clock.ts';
import type { Database } from '../../../platform/store/schema.ts';
import { inForce } from './claim-expiry.ts';
import type { DomainRow } from './to-domain.ts';

/**
 * The domain `host` of a project, or NOT_FOUND. Host names are stored lowercase. An expired
 * pending claim is not found (see claim-expiry.ts).
 */
export async function findDomain(
  deps: { db: Kysely<Database>; clock: Clock; config: { domainClaimTtlMs: number } },
  projectId: string,
  host: string,
): Promise<DomainRow> {
  const row = await deps.db
    .selectFrom('domains')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('domain', '=', host.toLowerCase())
    .where(inForce(deps.clock, deps.config.domainClaimTtlMs))
    .executeTakeFirst();
  if (!row) throw ApiError.notFound(`Domain ${host} of project ${projectId}`);
  return row;
}
