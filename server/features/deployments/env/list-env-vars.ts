import type { EnvVar, ListEnvQuery } from '../../../../api/schemas/env.ts';
import { requireProject } from '../../identity/index.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { toEnvVar } from './to-env-var.ts';

/** A project's variables, newest first; every member may read, secrets come back masked. */
export async function listEnvVars(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ListEnvQuery,
): Promise<ListPage<EnvVar>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  let base = deps.db.selectFrom('env_vars').where('project_id', '=', project.id);
  if (q.environment) base = base.where('environment', '=', q.environment);
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return { ...page, items: page.items.map((r) => toEnvVar(deps, r)) };
}
