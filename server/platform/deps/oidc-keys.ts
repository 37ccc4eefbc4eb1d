import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import type { Config } from '../config.ts';

/**
 * The OIDC issuer's signing keys (`Deps.oidcKeys`), one set per service. Where they are is read
 * from the issuer's discovery document (`<issuer>/.well-known/openid-configuration`, its
 * `jwks_uri`), as OpenID Connect Discovery says, not from a path guessed from the issuer. The
 * keys are fetched when a token is first verified, again when a token names an unknown `kid` (at
 * most once per `SLIPWAY_OIDC_KEYS_COOLDOWN`), and kept 10 minutes; the discovery document is
 * read again after an hour, and after a failed read on the next token.
 */
export type OidcKeys = JWTVerifyGetKey;

const Discovery = z.object({ issuer: z.string(), jwks_uri: z.string().url() });
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;
const DISCOVERY_TIMEOUT_MS = 5_000;

type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;

/** Reads the discovery document and makes the key set its `jwks_uri` names. */
async function discover(
  oidc: Pick<Config['oidc'], 'issuer' | 'keysCooldownMs'>,
  fetchImpl: typeof fetch,
): Promise<RemoteKeys> {
  const url = `${oidc.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let body: unknown;
  try {
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`it answered ${res.status}`);
    body = await res.json();
  } catch (err) {
    throw new errors.JOSEError(`could not read ${url}: ${(err as Error).message}`);
  }
  const doc = Discovery.safeParse(body);
  if (!doc.success) throw new errors.JOSEError(`${url} names no jwks_uri`);
  // The document must be the issuer's own (OpenID Connect Discovery 1.0, section 4.3).
  if (doc.data.issuer.replace(/\/$/, '') !== oidc.issuer.replace(/\/$/, '')) {
    throw new errors.JOSEError(`${url} is of issuer ${doc.data.issuer}, not ${oidc.issuer}`);
  }
  return createRemoteJWKSet(new URL(doc.data.jwks_uri), {
    cooldownDuration: oidc.keysCooldownMs,
    cacheMaxAge: 10 * 60_000,
  });
}

export function createOidcKeys(
  oidc: Pick<Config['oidc'], 'issuer' | 'keysCooldownMs'>,
  { fetchImpl = fetch, now = Date.now }: { fetchImpl?: typeof fetch; now?: () => number } = {},
): OidcKeys {
  let keys: { set: Promise<RemoteKeys>; at: number } | null = null;
  return async (header, token) => {
    if (!keys || now() - keys.at > DISCOVERY_MAX_AGE_MS) {
      const set = discover(oidc, fetchImpl);
      keys = { set, at: now() };
      // A failed read is not kept: the next token tries again.
      set.catch(() => {
        if (keys?.set === set) keys = null;
      });
    }
    const set = await keys.set;
    return set(header, token);
  };
}
