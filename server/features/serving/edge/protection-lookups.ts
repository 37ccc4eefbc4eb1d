import type { Deps } from '../../../platform/deps/deps.ts';
import type { ProtectionGateDeps } from './protection-gate.ts';

/**
 * Marks a one-time sign-in code used, in one conditional update (exact across every edge
 * process: a code replayed, even at the same instant, opens nothing the second time).
 */
export async function useProtectionCode(
  deps: Pick<Deps, 'db'>,
  codeHash: string,
  now: Date,
): Promise<{ projectId: string; host: string; userId: string } | null> {
  const at = now.toISOString();
  const row = await deps.db
    .updateTable('protection_codes')
    .set({ used_at: at })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['project_id', 'host', 'user_id'])
    .executeTakeFirst();
  return row ? { projectId: row.project_id, host: row.host, userId: row.user_id } : null;
}

/** A share link that has not expired, by its token's hash. */
export async function findProtectionLink(
  deps: Pick<Deps, 'db'>,
  tokenHash: string,
  now: Date,
): Promise<{ id: string; projectId: string; expiresAt: number } | null> {
  const row = await deps.db
    .selectFrom('protection_links')
    .select(['id', 'project_id', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return row ? { id: row.id, projectId: row.project_id, expiresAt: Date.parse(row.expires_at) } : null;
}

/** The gate's outside world, from the service's deps. */
export function protectionGateDeps(
  deps: Pick<Deps, 'db' | 'clock' | 'urls' | 'config' | 'protectionKey'>,
): ProtectionGateDeps {
  return {
    key: deps.protectionKey,
    now: () => deps.clock.now(),
    dashboardUrl: () => deps.urls.api,
    httpsPublic: deps.config.publicEdgeUrl?.startsWith('https:') ?? false,
    useCode: (hash, now) => useProtectionCode(deps, hash, now),
    findLink: (hash, now) => findProtectionLink(deps, hash, now),
  };
}

/**
 * Drops sign-in codes past their end (used or not: a code works for a minute at most) and share
 * links expired for a day (kept that long so that the list still shows why a link stopped).
 * The monitoring run calls this.
 */
export async function pruneProtection(deps: Pick<Deps, 'db' | 'clock'>): Promise<void> {
  const now = deps.clock.now();
  await deps.db.deleteFrom('protection_codes').where('expires_at', '<=', now.toISOString()).execute();
  const dayAgo = new Date(now.getTime() - 86_400_000).toISOString();
  await deps.db.deleteFrom('protection_links').where('expires_at', '<=', dayAgo).execute();
}
