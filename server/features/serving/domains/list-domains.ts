import type { Domain, ListDomainsQuery } from '../../../../api/schemas/domains.ts';
import { requireProject } from '../../identity/index.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { inForce } from './claim-expiry.ts';
import { toDomain } from './to-domain.ts';

/** A project's domains, newest first; expired pending claims are left out. */
export async function listDomains(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ListDomainsQuery,
): Promise<ListPage<Domain>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const base = deps.db
    .selectFrom('domains')
    .where('project_id', '=', project.id)
    .where(inForce(deps.clock, deps.config.domainClaimTtlMs));
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return { ...page, items: page.items.map((r) => toDomain(deps, project, r)) };
}
