import type { Domain, ListDomainsQuery } from '../../../api/schemas/domains.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { inForce } from './claim-expiry.ts';
import { toDomain } from './to-domain.ts';

/** A project's domains, newest first; expired pending claims are left out. */
export async function listDomains(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ListDomainsQuery,
): Promise<{ items: Domain[]; total: number }> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const base = deps.db
    .selectFrom('domains')
    .where('project_id', '=', project.id)
    .where(inForce(deps.clock, deps.config.domainClaimTtlMs));
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(q.limit)
      .offset((q.page - 1) * q.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map((r) => toDomain(deps, project, r)), total: Number(count.n) };
}
