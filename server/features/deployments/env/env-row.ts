import type { Selectable } from 'kysely';
import { randomString } from '../../../core/ids.ts';
import type { EnvVarsTable } from '../../../platform/store/schema.ts';

export type EnvRow = Selectable<EnvVarsTable>;

/** Row id of a variable; never on the wire (a variable is addressed by key and environment). */
export const newEnvVarId = () => `env_${randomString(20)}`;
