import type { EnvEnvironment } from '../../../../api/schemas/env.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { readPlaintext } from './read-plaintext.ts';

export interface BuildEnv {
  /** Every variable of the environment, plaintext. */
  vars: Record<string, string>;
  /** Plaintext of the `encrypted` variables, longest first, to mask in build logs; empty values left out. */
  secrets: string[];
}

/**
 * The environment a build of `environment` runs with. Throws (INTERNAL_ERROR naming the variable)
 * when a stored value cannot be decrypted: a build must fail rather than run with a blank secret.
 */
export async function resolveBuildEnv(
  deps: Pick<Deps, 'db' | 'cipher'>,
  projectId: string,
  environment: EnvEnvironment,
): Promise<BuildEnv> {
  const plain = await readPlaintext(deps, projectId, environment);
  const secrets = [...new Set(plain.filter((v) => v.encrypted && v.value !== '').map((v) => v.value))];
  // Longest first, so a masker replacing in order never leaves part of a longer secret visible.
  secrets.sort((a, b) => b.length - a.length);
  return { vars: Object.fromEntries(plain.map((v) => [v.key, v.value])), secrets };
}
