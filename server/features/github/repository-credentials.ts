import type { Cipher } from '../../core/secrets.ts';

/** What a repository URL's credentials read as in answers and logs. */
export const MASK = '***';

const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i;

/**
 * Splits the credentials off a repository URL: `https://x-access-token:ghp_...@github.com/o/r`
 * becomes `https://github.com/o/r` and `x-access-token:ghp_...`. Over http(s) any user part is a
 * credential (a token alone is a common form); over ssh a bare user name (`ssh://git@host/...`)
 * is not secret and stays, a password is split off with its user. A user part that is the mask
 * (`https://***@...`, as answers show it) comes back as `credentials: MASK`: "keep what is stored".
 */
export function splitRepositoryCredentials(url: string): { url: string; credentials: string | null } {
  const m = USERINFO.exec(url);
  if (!m) return { url, credentials: null };
  const [whole, scheme, userinfo] = m as unknown as [string, string, string];
  const web = /^https?:\/\/$/i.test(scheme);
  if (!web && !userinfo.includes(':')) return { url, credentials: null };
  const rest = url.slice(whole.length);
  if (userinfo === MASK) return { url: scheme + rest, credentials: MASK };
  return { url: scheme + rest, credentials: userinfo === '' ? null : userinfo };
}

/** The URL as members see it: credentials, if any, replaced with `***`. */
export function maskedRepositoryUrl(url: string, hasCredentials: boolean): string {
  return hasCredentials ? url.replace(/^([a-z][a-z0-9+.-]*:\/\/)/i, `$1${MASK}@`) : url;
}

/** The URL git clones: the stored URL with its credentials put back. */
export function cloneUrl(url: string, credentials: string | null): string {
  return credentials ? url.replace(/^([a-z][a-z0-9+.-]*:\/\/)/i, `$1${credentials}@`) : url;
}

/** Stored form of the credentials: encrypted like secret environment variables. */
export const sealCredentials = (cipher: Cipher, credentials: string | null) =>
  credentials === null ? null : cipher.encrypt(credentials);

export const openCredentials = (cipher: Cipher, sealed: string | null) =>
  sealed === null ? null : cipher.decrypt(sealed);
