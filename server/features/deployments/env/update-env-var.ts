import type { EnvSelectorQuery, EnvVar, UpdateEnvBody } from '../../../../api/schemas/env.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { findEnvVar } from './find-env-var.ts';
import { toEnvVar } from './to-env-var.ts';

/** Changes the value and/or the secret flag of one variable. */
export async function updateEnvVar(
  deps: Deps,
  actor: Actor,
  projectId: string,
  key: string,
  q: EnvSelectorQuery,
  body: UpdateEnvBody,
): Promise<EnvVar> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const row = await findEnvVar(deps.db, project.id, key, q.environment);
  const changes = {
    ...(body.value === undefined ? {} : { value_ciphertext: deps.cipher.encrypt(body.value) }),
    ...(body.encrypted === undefined ? {} : { encrypted: body.encrypted ? 1 : 0 }),
    updated_at: deps.clock.now().toISOString(),
  };
  await deps.db.updateTable('env_vars').set(changes).where('id', '=', row.id).execute();
  return toEnvVar(deps, { ...row, ...changes });
}
