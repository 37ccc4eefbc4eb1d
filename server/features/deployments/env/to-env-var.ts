import type { EnvVar } from '../../../../api/schemas/env.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { decryptValue } from './decrypt-value.ts';
import type { EnvRow } from './env-row.ts';

/** Row -> wire shape; a secret's value is never decrypted for a read. */
export function toEnvVar(deps: Pick<Deps, 'cipher'>, row: EnvRow): EnvVar {
  const encrypted = row.encrypted === 1;
  return {
    key: row.key,
    value: encrypted ? null : decryptValue(deps, row),
    encrypted,
    environment: row.environment,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
