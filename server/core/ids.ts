import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Lowercase alphanumerics only, so the suffix is also safe inside a host name. */
export function randomString(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    const b = bytes[i]!;
    // 252 = 7 * 36: rejecting the top bytes keeps every character equally likely.
    if (b < 252) out += ALPHABET[b % 36];
  }
  return out.length === length ? out : out + randomString(length - out.length);
}

export type IdPrefix =
  | 'org'
  | 'prj'
  | 'dpl'
  | 'dom'
  | 'alt'
  | 'whk'
  | 'whd'
  | 'usr'
  | 'tok'
  | 'chg'
  | 'job'
  | 'mem'
  | 'ghe'
  | 'tpo'
  | 'dph'
  | 'psl';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomString(20)}`;
}
