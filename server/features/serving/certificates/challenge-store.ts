import type { Deps } from '../../../platform/deps/deps.ts';

/** Where ACME servers fetch HTTP-01 challenges (RFC 8555, 8.3). */
export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
/** A challenge left behind by a worker that died is forgotten after this long. */
export const CHALLENGE_TTL_MS = 3_600_000;

/** base64url, as RFC 8555 tokens are; anything else is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

/** The token of a challenge request path, or null when the path is not one. */
export function challengeTokenOf(url: string | undefined): string | null {
  if (!url?.startsWith(ACME_CHALLENGE_PREFIX)) return null;
  const token = url.slice(ACME_CHALLENGE_PREFIX.length).split('?')[0]!;
  return TOKEN.test(token) ? token : null;
}

/** Publishes a challenge's answer in the database, where every edge process can read it. */
export async function putChallenge(
  deps: Pick<Deps, 'db' | 'clock'>,
  c: { token: string; keyAuthorization: string; domain: string },
): Promise<void> {
  const now = deps.clock.now();
  const values = {
    key_authorization: c.keyAuthorization,
    domain: c.domain,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString(),
  };
  await deps.db
    .insertInto('acme_challenges')
    .values({ token: c.token, ...values })
    .onConflict((oc) => oc.column('token').doUpdateSet(values))
    .execute();
}

export async function removeChallenge(deps: Pick<Deps, 'db'>, token: string): Promise<void> {
  await deps.db.deleteFrom('acme_challenges').where('token', '=', token).execute();
}

/** The key authorization to answer for `token`, or null. */
export async function findChallenge(deps: Pick<Deps, 'db' | 'clock'>, token: string): Promise<string | null> {
  if (!TOKEN.test(token)) return null;
  const row = await deps.db
    .selectFrom('acme_challenges')
    .select('key_authorization')
    .where('token', '=', token)
    .where('expires_at', '>', deps.clock.now().toISOString())
    .executeTakeFirst();
  return row?.key_authorization ?? null;
}

export async function pruneChallenges(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const res = await deps.db
    .deleteFrom('acme_challenges')
    .where('expires_at', '<=', deps.clock.now().toISOString())
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
