import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config-error.ts';

/** AES-256-GCM for values at rest. A value that fails to decrypt throws; it never reads as empty. */
export interface Cipher {
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
}

export function createCipher(key: Buffer): Cipher {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
      return `v1.${iv.toString('base64url')}.${c.getAuthTag().toString('base64url')}.${ct.toString('base64url')}`;
    },
    decrypt(ciphertext) {
      const [version, iv, tag, ct] = ciphertext.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || ct === undefined) {
        throw new Error('stored secret is not in a known format');
      }
      try {
        const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        d.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
      } catch {
        throw new Error(
          'a stored secret could not be decrypted: SLIPWAY_ENCRYPTION_KEY differs from the key it was written with',
        );
      }
    },
  };
}

export const KEY_FILE = 'encryption.key';

/**
 * The key from SLIPWAY_ENCRYPTION_KEY, else from `<dataDir>/encryption.key`; null when neither
 * is there (nothing is generated: `slipway backup` and `restore` use this).
 */
export function findEncryptionKey(configured: string | undefined, dataDir: string): Buffer | null {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) {
      throw new ConfigError(
        'SLIPWAY_ENCRYPTION_KEY must be 32 bytes encoded in base64 (generate one with `openssl rand -base64 32`)',
      );
    }
    return key;
  }
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) return null;
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte base64 key`);
  return key;
}

/** The key from SLIPWAY_ENCRYPTION_KEY, else from `<dataDir>/encryption.key`, generated on first start. */
export function loadEncryptionKey(
  configured: string | undefined,
  dataDir: string,
  log: (msg: string) => void,
): Buffer {
  const found = findEncryptionKey(configured, dataDir);
  if (found) return found;
  const file = join(dataDir, KEY_FILE);
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600 });
  log(`Generated an encryption key in ${file}; back it up, or set SLIPWAY_ENCRYPTION_KEY.`);
  return key;
}
