import { ApiError } from '../../../api/errors.ts';
import type { AddDomainBody, Domain } from '../../../api/schemas/domains.ts';
import { newId, randomString } from '../../lib/ids.ts';
import { isUniqueViolation } from '../../store/errors.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { isServiceDomain } from './dns-records.ts';
import { toDomain, type DomainRow } from './to-domain.ts';

/** Adds a custom domain, `pending` until its TXT record is verified. */
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
    await deps.db.insertInto('domains').values(row).execute();
  } catch (err) {
    // Unique across the service; which project holds it is not the caller's business.
    if (isUniqueViolation(err)) {
      throw ApiError.conflict(`Domain ${body.domain} is already added to a project; remove it there first`);
    }
    throw err;
  }
  return toDomain(deps, project, row);
}
