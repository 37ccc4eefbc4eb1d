import { randomBytes } from 'node:crypto';
import type { CreatedToken } from '../../../../api/schemas/user.ts';
import { hashToken, TOKEN_PREFIX } from '../../../core/api-token.ts';
import { newId } from '../../../core/ids.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

/**
 * Issues a new token; the plaintext is returned here only. `githubApp` marks the GitHub App's own
 * token (only the operator's command line makes one): the only kind that may store GitHub events.
 */
export async function createToken(
  deps: Deps,
  userId: string,
  name: string,
  scope?: { projectId: string; role: 'viewer' | 'developer'; expiresAt: string },
  kind: { githubApp?: boolean } = {},
): Promise<CreatedToken> {
  const token = `${TOKEN_PREFIX}${randomBytes(30).toString('base64url')}`;
  const id = newId('tok');
  const createdAt = deps.clock.now().toISOString();
  await deps.db
    .insertInto('tokens')
    .values({
      id,
      user_id: userId,
      name,
      token_hash: hashToken(token),
      prefix: token.slice(0, 10),
      created_at: createdAt,
      last_used_at: null,
      revoked_at: null,
      ...(scope
        ? {
            source: 'oidc' as const,
            project_id: scope.projectId,
            scope_role: scope.role,
            expires_at: scope.expiresAt,
          }
        : kind.githubApp
          ? { source: 'github_app' as const }
          : {}),
    })
    .execute();
  return { id, name, token, createdAt };
}
