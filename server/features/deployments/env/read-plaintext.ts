import type { Kysely } from 'kysely';
import type { EnvEnvironment } from '../../../../api/schemas/env.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { decryptValue } from './decrypt-value.ts';

export interface PlainVar {
  key: string;
  value: string;
  encrypted: boolean;
}

/** Every variable of one environment with its plaintext, sorted by key (code points); fails on any bad value. */
export async function readPlaintext(
  deps: Pick<Deps, 'cipher'> & { db: Kysely<Database> },
  projectId: string,
  environment: EnvEnvironment,
): Promise<PlainVar[]> {
  const rows = await deps.db
    .selectFrom('env_vars')
    .select(['key', 'environment', 'value_ciphertext', 'encrypted'])
    .where('project_id', '=', projectId)
    .where('environment', '=', environment)
    .execute();
  // Sorted here, not in SQL: PostgreSQL's collation may order keys differently from SQLite's.
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return rows.map((r) => ({ key: r.key, value: decryptValue(deps, r), encrypted: r.encrypted === 1 }));
}
