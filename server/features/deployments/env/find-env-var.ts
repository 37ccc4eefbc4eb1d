import type { Kysely } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import type { EnvEnvironment } from '../../../../api/schemas/env.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { EnvRow } from './env-row.ts';

/**
 * The variable `key` of `environment`; without an environment, the only variable of that key.
 * A key present in several environments is ambiguous: VALIDATION_ERROR asking for `environment`.
 */
export async function findEnvVar(
  db: Kysely<Database>,
  projectId: string,
  key: string,
  environment: EnvEnvironment | undefined,
): Promise<EnvRow> {
  let q = db.selectFrom('env_vars').selectAll().where('project_id', '=', projectId).where('key', '=', key);
  if (environment) q = q.where('environment', '=', environment);
  const rows = await q.orderBy('environment').execute();
  const [row, ...others] = rows;
  if (!row) {
    throw ApiError.notFound(`Environment variable ${key}${environment ? ` (${environment})` : ''}`);
  }
  if (others.length > 0) {
    const envs = rows.map((r) => r.environment).join(', ');
    throw ApiError.validation([
      {
        path: 'environment',
        message: `is required: ${key} exists in ${envs}; add ?environment= to choose one`,
      },
    ]);
  }
  return row;
}
