import type { ListProjectsQuery, Project } from '../../../../api/schemas/projects.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import { requireOrganization } from '../../identity/index.ts';
import { toProject } from './to-project.ts';

/**
 * The projects of one organization (`org`) or of all the caller's, newest first; without a
 * `status` filter, active and suspended ones.
 */
export async function listProjects(
  deps: Deps,
  actor: Actor,
  q: ListProjectsQuery,
): Promise<ListPage<Project>> {
  let orgIds: string[];
  if (q.org) {
    const { org } = await requireOrganization(deps, actor, q.org, 'viewer');
    orgIds = [org.id];
  } else {
    const rows = await deps.db
      .selectFrom('memberships')
      .select('organization_id')
      .where('user_id', '=', actor.userId)
      .execute();
    orgIds = rows.map((r) => r.organization_id);
  }
  if (orgIds.length === 0) return { items: [], total: 0, next: null };
  let base = deps.db.selectFrom('projects').where('organization_id', 'in', orgIds);
  base = q.status ? base.where('status', '=', q.status) : base.where('status', '!=', 'deleted');
  const page = await readPage(
    base.selectAll(),
    base,
    q,
    { time: 'created_at', id: 'id', key: (r) => [r.created_at, r.id] },
    { total: () => projectTotal(deps, orgIds, q.status) },
  );
  return { ...page, items: page.items.map((r) => toProject(deps, r)) };
}

/**
 * The number of projects a list shows, from `project_counts` (kept by triggers, migration 026):
 * one row per organization and status, so no project is read.
 */
async function projectTotal(deps: Deps, orgIds: string[], status: ListProjectsQuery['status']) {
  let q = deps.db
    .selectFrom('project_counts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string | number>('n'), eb.lit(0)).as('n'))
    .where('organization_id', 'in', orgIds);
  q = status ? q.where('status', '=', status) : q.where('status', '!=', 'deleted');
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}
