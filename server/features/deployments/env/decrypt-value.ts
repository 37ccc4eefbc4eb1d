import { ApiError } from '../../../../api/errors.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import type { EnvRow } from './env-row.ts';

/**
 * The plaintext of a stored value. A value that fails to decrypt (another key, tampered data) is
 * an INTERNAL_ERROR naming the variable: it must never read as an empty or missing value, or a
 * build would run with a blank secret.
 */
export function decryptValue(
  deps: Pick<Deps, 'cipher'>,
  row: Pick<EnvRow, 'key' | 'environment' | 'value_ciphertext'>,
): string {
  try {
    return deps.cipher.decrypt(row.value_ciphertext);
  } catch (err) {
    throw new ApiError(
      'INTERNAL_ERROR',
      `The stored value of ${row.key} (${row.environment}) cannot be decrypted: ${(err as Error).message}. ` +
        'Restore the SLIPWAY_ENCRYPTION_KEY it was written with, or set the variable again.',
    );
  }
}
