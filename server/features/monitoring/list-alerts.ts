import type { Alert, AlertsQuery } from '../../../api/schemas/monitoring.ts';
import { requireProject } from '../identity/index.ts';
import { readPage, type ListPage } from '../../platform/http/pagination.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { toAlert } from './alerts.ts';

/** The project's alerts, newest first, optionally only `active` or `resolved` ones. */
export async function listAlerts(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: AlertsQuery,
): Promise<ListPage<Alert>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  let base = deps.db.selectFrom('alerts').where('project_id', '=', project.id);
  if (q.status) base = base.where('status', '=', q.status);
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return { ...page, items: page.items.map(toAlert) };
}
