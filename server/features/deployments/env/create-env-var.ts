import { ApiError } from '../../../../api/errors.ts';
import type { CreateEnvBody, EnvVar } from '../../../../api/schemas/env.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { newEnvVarId, type EnvRow } from './env-row.ts';
import { toEnvVar } from './to-env-var.ts';

/** Creates a variable; every value is encrypted at rest, `encrypted` only hides it from reads. */
export async function createEnvVar(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: CreateEnvBody,
): Promise<EnvVar> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const now = deps.clock.now().toISOString();
  const row: EnvRow = {
    id: newEnvVarId(),
    project_id: project.id,
    key: body.key,
    environment: body.environment,
    value_ciphertext: deps.cipher.encrypt(body.value),
    encrypted: body.encrypted ? 1 : 0,
    created_at: now,
    updated_at: now,
  };
  try {
    await deps.db.insertInto('env_vars').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw ApiError.conflict(
        `${body.key} already exists in ${body.environment}; change it with PATCH /env/${body.key}?environment=${body.environment}`,
      );
    }
    throw err;
  }
  return toEnvVar(deps, row);
}
