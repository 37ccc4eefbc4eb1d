import type { EnvVar, ListEnvQuery } from '../../../api/schemas/env.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { toEnvVar } from './to-env-var.ts';

/** A project's variables, newest first; every member may read, secrets come back masked. */
export async function listEnvVars(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ListEnvQuery,
): Promise<{ items: EnvVar[]; total: number }> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  let base = deps.db.selectFrom('env_vars').where('project_id', '=', project.id);
  if (q.environment) base = base.where('environment', '=', q.environment);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('key')
      .orderBy('environment')
      .limit(q.limit)
      .offset((q.page - 1) * q.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map((r) => toEnvVar(deps, r)), total: Number(count.n) };
}
