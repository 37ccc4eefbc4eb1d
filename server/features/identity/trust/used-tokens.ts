import type { Kysely } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

/** How far a token's times may be off and still be accepted (jwtVerify's `clockTolerance`). */
export const OIDC_CLOCK_TOLERANCE_S = 60;

/** The longest `jti` kept; GitHub's are UUIDs. */
const MAX_JTI = 256;

/** Why a replayed job token is refused, and what the job does instead. */
export const ALREADY_EXCHANGED =
  'OIDC token refused: it was already exchanged (its jti has been used). A job token is good for one exchange: request a new one from the runner (core.getIDToken) for each exchange, including retries';

/** The token's `jti`, checked: the one claim that tells one job token from another. */
export function jtiOf(claims: { jti?: unknown }): string {
  const { jti } = claims;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI) {
    throw new ApiError('UNAUTHORIZED', 'OIDC token refused: its jti claim is not valid');
  }
  return jti;
}

/**
 * Marks a job token as exchanged, inside the exchange's transaction, or refuses it when it
 * already was. The row's primary key makes this atomic: of two exchanges of one token at once,
 * on any number of API processes, exactly one inserts it (the other waits for its commit on
 * PostgreSQL, and then inserts nothing). A rolled-back exchange leaves the token unused.
 */
export async function claimJti(
  tx: Kysely<Database>,
  use: { jti: string; exp: number; usedAt: Date; tokenId: string },
): Promise<void> {
  const res = await tx
    .insertInto('used_oidc_tokens')
    .values({
      jti: use.jti,
      // Until then the token's signature and times could still be accepted; after, never again.
      expires_at: new Date((use.exp + OIDC_CLOCK_TOLERANCE_S) * 1000).toISOString(),
      used_at: use.usedAt.toISOString(),
      token_id: use.tokenId,
    })
    .onConflict((oc) => oc.column('jti').doNothing())
    .executeTakeFirst();
  if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) throw new ApiError('UNAUTHORIZED', ALREADY_EXCHANGED);
}

/** Drops the marks of tokens that have expired (the monitoring run calls this). */
export async function pruneUsedOidcTokens(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const res = await deps.db
    .deleteFrom('used_oidc_tokens')
    .where('expires_at', '<', deps.clock.now().toISOString())
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
