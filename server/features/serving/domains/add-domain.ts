import { ApiError } from '../../../../api/errors.ts';
import type { AddDomainBody, Domain } from '../../../../api/schemas/domains.ts';
import { newId, randomString } from '../../../core/ids.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { inForce } from './claim-expiry.ts';
import { isServiceDomain } from './dns-records.ts';
import { toDomain, type DomainRow } from './to-domain.ts';

/**
 * Adds a custom domain as a claim, `pending` until its TXT record is verified. A pending claim
 * blocks no one: other projects may claim the same name (each gets its own token) and the first
 * to verify gets it. So adding reveals nothing about other organizations' domains.
 */
export async function addDomain(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: AddDomainBody,
): Promise<Domain> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  // Deployment hosts live under the service's own domain; a custom domain there could shadow one.
  if (isServiceDomain(deps.config, body.domain)) {
    throw ApiError.validation([
      {
        path: 'domain',
        message: `is under the service's own domain ${deps.config.domain}; use a domain you own`,
      },
    ]);
  }
  const now = deps.clock.now().toISOString();
  const row: DomainRow = {
    id: newId('dom'),
    project_id: project.id,
    domain: body.domain,
    status: 'pending',
    ssl_status: 'pending',
    ssl_error: null,
    verification_token: `slipway-verification=${randomString(32)}`,
    verified_at: null,
    created_at: now,
    updated_at: now,
  };
  try {
    await deps.db.transaction().execute(async (tx) => {
      // This project's own expired claim on the name makes way for the new one.
      await tx
        .deleteFrom('domains')
        .where('project_id', '=', project.id)
        .where('domain', '=', body.domain)
        .where((eb) => eb.not(inForce(deps.clock, deps.config.domainClaimTtlMs)(eb)))
        .execute();
      await tx.insertInto('domains').values(row).execute();
    });
  } catch (err) {
    // One claim per name and project; other projects' claims are not the caller's business.
    if (isUniqueViolation(err)) {
      throw ApiError.conflict(`Domain ${body.domain} is already added to this project`);
    }
    throw err;
  }
  return toDomain(deps, project, row);
}
