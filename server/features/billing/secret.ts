import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../platform/config.ts';
import { ConfigError } from '../../core/config-error.ts';

/** Shortest accepted SLIPWAY_PAYMENT_SECRET: an HMAC key needs at least 256 bits to be worth having. */
const MIN_SECRET_LENGTH = 32;

/**
 * The key challenge ids are signed with: SLIPWAY_PAYMENT_SECRET, else `<dataDir>/payment.key`,
 * generated on first use. Every API process that shares a database must use the same key, or a
 * challenge issued by one is refused by another: set SLIPWAY_PAYMENT_SECRET when running several.
 */
export function loadPaymentSecret(
  configured: string | undefined,
  dataDir: string,
  log: (msg: string) => void,
): Buffer {
  if (configured) {
    if (configured.length < MIN_SECRET_LENGTH) {
      throw new ConfigError(
        `SLIPWAY_PAYMENT_SECRET must be at least ${MIN_SECRET_LENGTH} characters (generate one with \`openssl rand -base64 32\`)`,
      );
    }
    return Buffer.from(configured, 'utf8');
  }
  const file = join(dataDir, 'payment.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length < 32) throw new ConfigError(`${file} does not hold a base64 key of at least 32 bytes`);
    return key;
  }
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600 });
  log(
    `Generated a payment challenge key in ${file}; set SLIPWAY_PAYMENT_SECRET when running several API processes.`,
  );
  return key;
}

/**
 * The payment key of a service (`Deps.paymentKey`), loaded on first use: the environment and
 * the key file are read only when a paid operation runs. It is read here rather than in
 * config.ts so that the payment code stays in one folder.
 */
export function lazyPaymentKey(config: Pick<Config, 'paymentSecret' | 'dataDir'>, log: Logger): () => Buffer {
  let key: Buffer | undefined;
  return () => (key ??= loadPaymentSecret(config.paymentSecret, config.dataDir, (m) => log.warn(m)));
}
