import type { EnvSelectorQuery } from '../../../../api/schemas/env.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { findEnvVar } from './find-env-var.ts';
import type { EnvRow } from './env-row.ts';

/** Deletes one variable; answers which one. */
export async function deleteEnvVar(
  deps: Deps,
  actor: Actor,
  projectId: string,
  key: string,
  q: EnvSelectorQuery,
): Promise<Pick<EnvRow, 'key' | 'environment'>> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const row = await findEnvVar(deps.db, project.id, key, q.environment);
  await deps.db.deleteFrom('env_vars').where('id', '=', row.id).execute();
  return { key: row.key, environment: row.environment };
}
