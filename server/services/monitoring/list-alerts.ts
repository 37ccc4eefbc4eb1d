import type { Alert, AlertsQuery } from '../../../api/schemas/monitoring.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { toAlert } from './alerts.ts';

/** The project's alerts, newest first, optionally only `active` or `resolved` ones. */
export async function listAlerts(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: AlertsQuery,
): Promise<{ items: Alert[]; total: number }> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  let base = deps.db.selectFrom('alerts').where('project_id', '=', project.id);
  if (q.status) base = base.where('status', '=', q.status);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(q.limit)
      .offset((q.page - 1) * q.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toAlert), total: Number(count.n) };
}
