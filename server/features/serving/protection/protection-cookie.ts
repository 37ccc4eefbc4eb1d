import { createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

/** The cookie a protected host sets after a sign-in or a share link (docs/protection.md). */
export const PROTECTION_COOKIE = 'slipway_protection';

/** The header automation sends the project's bypass secret in. */
export const BYPASS_HEADER = 'x-slipway-protection-bypass';

/** Where the edge takes a one-time code from the dashboard, and a share link's token. */
export const AUTH_PATH = '/_slipway/auth';
export const SHARE_PATH = '/_slipway/share';

/** Prefixes that log redaction (core/redact-url.ts) and secret scanners recognise. */
export const BYPASS_PREFIX = 'slwb_';
export const SHARE_PREFIX = 'slws_';

/** How long a sign-in's cookie opens its host. */
export const SIGN_IN_COOKIE_MS = 12 * 3600_000;
/** A share link's cookie lasts this long at most (and never past the link): a revoked link soon stops working. */
export const SHARE_COOKIE_MS = 3600_000;
/** How long the dashboard's one-time code may wait for the edge. */
export const CODE_TTL_MS = 60_000;

/** The cookies' signing key: HKDF of the encryption key, so that every process agrees on it. */
export function protectionKeyOf(encryptionKey: Buffer): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', encryptionKey, 'slipway', 'preview protection cookies', 32));
}

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** 32 random bytes, URL-safe, after `prefix`. */
export const newSecret = (prefix = '') => `${prefix}${randomBytes(32).toString('base64url')}`;

/** Compares a secret with a stored SHA-256 (hex) in constant time. */
export function hashMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(sha256(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** What a protection cookie grants: one host of one project, until `expiresAt` (ms). */
export interface Grant {
  projectId: string;
  host: string;
  expiresAt: number;
  /** The share link that set it (it ends when the link is revoked); absent after a member's sign-in. */
  link?: string;
  /** The member whose sign-in set it (it ends when they leave the organization); absent for a share link. */
  user?: string;
}

/** Signs a grant (HS256 JWT; `sub` the project, `aud` the host, `lnk` the share link, `usr` the member). */
export async function signGrant(key: Uint8Array, grant: Grant): Promise<string> {
  return new SignJWT({
    ...(grant.link === undefined ? {} : { lnk: grant.link }),
    ...(grant.user === undefined ? {} : { usr: grant.user }),
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(grant.projectId)
    .setAudience(grant.host)
    .setIssuer('slipway-protection')
    .setExpirationTime(Math.floor(grant.expiresAt / 1000))
    .sign(key);
}

/** The grant a cookie value carries, or null when it is not one signed with `key`, or has expired at `now`. */
export async function verifyGrant(key: Uint8Array, token: string, now: Date): Promise<Grant | null> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      issuer: 'slipway-protection',
      currentDate: now,
    });
    if (typeof payload.sub !== 'string' || typeof payload.aud !== 'string' || payload.exp === undefined)
      return null;
    const grant: Grant = { projectId: payload.sub, host: payload.aud, expiresAt: payload.exp * 1000 };
    if (payload.lnk !== undefined) {
      if (typeof payload.lnk !== 'string') return null;
      grant.link = payload.lnk;
    }
    if (payload.usr !== undefined) {
      if (typeof payload.usr !== 'string') return null;
      grant.user = payload.usr;
    }
    return grant;
  } catch {
    return null;
  }
}

/** `Set-Cookie` for a grant: host-only (no Domain), HttpOnly, SameSite=Lax, Secure over https. */
export function grantCookie(value: string, expiresAt: number, secure: boolean): string {
  const parts = [
    `${PROTECTION_COOKIE}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Expires=${new Date(expiresAt).toUTCString()}`,
  ];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** A Cookie header without the protection cookie (what a server app sees); undefined when nothing is left. */
export function withoutProtectionCookie(header: string): string | undefined {
  const kept = header
    .split(';')
    .filter((part) => {
      const eq = part.indexOf('=');
      return (eq < 0 ? part : part.slice(0, eq)).trim() !== PROTECTION_COOKIE;
    })
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return kept.length > 0 ? kept.join('; ') : undefined;
}
