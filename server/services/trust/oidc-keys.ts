import { createRemoteJWKSet } from 'jose';
import type { Config } from '../../config.ts';

/**
 * The OIDC issuer's signing keys (`Deps.oidcKeys`), one set per service: fetched when a token is
 * first verified, again when a token names an unknown `kid` (at most once per
 * `SLIPWAY_OIDC_KEYS_COOLDOWN`), and kept 10 minutes.
 */
export type OidcKeys = ReturnType<typeof createRemoteJWKSet>;

export function createOidcKeys(oidc: Pick<Config['oidc'], 'issuer' | 'keysCooldownMs'>): OidcKeys {
  return createRemoteJWKSet(new URL(`${oidc.issuer}/.well-known/jwks`), {
    cooldownDuration: oidc.keysCooldownMs,
    cacheMaxAge: 10 * 60_000,
  });
}
