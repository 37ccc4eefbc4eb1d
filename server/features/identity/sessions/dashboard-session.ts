import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';

export const SESSION_COOKIE = 'slipway_session';

const hash = (value: string) => createHash('sha256').update(value).digest('hex');

export interface Session {
  actor: Actor;
  /** The value each form of this session sends back as `_csrf`. */
  csrf: string;
  idHash: string;
}

/** Opens a session for a user; the returned secret goes into the cookie and nowhere else. */
export async function openSession(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  userId: string,
  tokenId: string | null,
): Promise<{ secret: string; expiresAt: Date }> {
  const secret = randomBytes(32).toString('base64url');
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + deps.config.sessionTtlMs);
  await deps.db
    .insertInto('sessions')
    .values({
      id_hash: hash(secret),
      user_id: userId,
      token_id: tokenId,
      csrf: randomBytes(24).toString('base64url'),
      created_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
    })
    .execute();
  return { secret, expiresAt };
}

/**
 * The session a request's cookie names, if it is still open: not expired, and the API token it
 * was opened with not revoked. Read from the database every time, so a sign-out or a revocation
 * made by any process applies to the next request.
 */
export async function readSession(
  deps: Pick<Deps, 'db' | 'clock'>,
  cookieHeader: string | undefined,
): Promise<Session | null> {
  const secret = cookieValue(cookieHeader, SESSION_COOKIE);
  if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  const idHash = hash(secret);
  const row = await deps.db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .leftJoin('tokens as t', 't.id', 's.token_id')
    .select(['s.user_id', 's.token_id', 's.csrf', 'u.email', 't.revoked_at'])
    .where('s.id_hash', '=', idHash)
    .where('s.expires_at', '>', deps.clock.now().toISOString())
    .executeTakeFirst();
  if (!row || row.revoked_at) return null;
  return {
    actor: { userId: row.user_id, email: row.email, tokenId: row.token_id ?? '' },
    csrf: row.csrf,
    idHash,
  };
}

export async function closeSession(deps: Pick<Deps, 'db'>, idHash: string): Promise<void> {
  await deps.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** Drops sessions past their end (the monitoring run calls this). */
export async function deleteExpiredSessions(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const r = await deps.db
    .deleteFrom('sessions')
    .where('expires_at', '<=', deps.clock.now().toISOString())
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Whether a form's `_csrf` is the session's, compared in constant time. */
export function csrfMatches(session: Session, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Set-Cookie` for the session: HttpOnly, SameSite=Lax (links from GitHub arrive signed in), Secure behind https. */
export function sessionCookie(
  value: string,
  opts: { path: string; secure: boolean; expires?: Date },
): string {
  const parts = [`${SESSION_COOKIE}=${value}`, `Path=${opts.path}`, 'HttpOnly', 'SameSite=Lax'];
  if (opts.secure) parts.push('Secure');
  parts.push(opts.expires ? `Expires=${opts.expires.toUTCString()}` : 'Max-Age=0');
  return parts.join('; ');
}
