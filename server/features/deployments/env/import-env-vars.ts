import { ApiError } from '../../../../api/errors.ts';
import type { ImportEnvBody, ImportEnvResult } from '../../../../api/schemas/env.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { newEnvVarId } from './env-row.ts';

/**
 * Imports variables into one environment in a single transaction: all or nothing. Existing keys
 * are overwritten with `overwrite`, else skipped; an overwrite keeps the secret flag unless the
 * entry sets `encrypted`, so a re-import cannot unmask a secret by accident.
 */
export async function importEnvVars(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: ImportEnvBody,
): Promise<ImportEnvResult> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const now = deps.clock.now().toISOString();
  try {
    return await deps.db.transaction().execute(async (tx) => {
      const existing = await tx
        .selectFrom('env_vars')
        .select(['id', 'key'])
        .where('project_id', '=', project.id)
        .where('environment', '=', body.environment)
        .execute();
      const idOf = new Map(existing.map((r) => [r.key, r.id]));
      const result = { created: 0, updated: 0, skipped: 0 };
      for (const v of body.variables) {
        const id = idOf.get(v.key);
        if (id === undefined) {
          await tx
            .insertInto('env_vars')
            .values({
              id: newEnvVarId(),
              project_id: project.id,
              key: v.key,
              environment: body.environment,
              value_ciphertext: deps.cipher.encrypt(v.value),
              encrypted: v.encrypted ? 1 : 0,
              created_at: now,
              updated_at: now,
            })
            .execute();
          result.created++;
        } else if (body.overwrite) {
          await tx
            .updateTable('env_vars')
            .set({
              value_ciphertext: deps.cipher.encrypt(v.value),
              ...(v.encrypted === undefined ? {} : { encrypted: v.encrypted ? 1 : 0 }),
              updated_at: now,
            })
            .where('id', '=', id)
            .execute();
          result.updated++;
        } else {
          result.skipped++;
        }
      }
      return result;
    });
  } catch (err) {
    // Another writer created one of these keys after our read: nothing was written, try again.
    if (isUniqueViolation(err)) {
      throw ApiError.conflict('The variables changed during the import; nothing was imported, retry it');
    }
    throw err;
  }
}
