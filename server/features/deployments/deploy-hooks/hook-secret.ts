import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A hook secret starts with this, so that log redaction and secret scanners recognise it. */
export const HOOK_SECRET_PREFIX = 'slwh_';

/** The path under the API's public URL that a hook's URL adds its `<id>.<secret>` to. */
export const HOOK_PATH = '/v1/hooks/deploy/';

const KEY_SHAPE = /^(dph_[a-z0-9]{20})\.(slwh_[A-Za-z0-9_-]{43})$/;

/** 32 random bytes: guessing one is out of reach, so no lock-out is needed beside the rate limit. */
export const newHookSecret = () => `${HOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

export const hashHookSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** The hook's URL up to its secret: what lists show. */
export const hookUrlPrefix = (apiUrl: string, hookId: string) =>
  `${apiUrl.replace(/\/+$/, '')}${HOOK_PATH}${hookId}.`;

/** `<id>.<secret>` of a hook's URL, or null when it is not shaped like one. */
export function parseHookKey(key: string): { hookId: string; secret: string } | null {
  const m = KEY_SHAPE.exec(key);
  return m ? { hookId: m[1]!, secret: m[2]! } : null;
}

/** Compares the secret's hash with the stored one in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashHookSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
