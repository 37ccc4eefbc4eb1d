import type { PageQuery } from '../../../../api/schemas/common.ts';
import type { TokenSummary } from '../../../../api/schemas/user.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';

/** The caller's tokens not revoked, newest first, by prefix: the plaintext is never shown again. */
export async function listTokens(deps: Deps, actor: Actor, q: PageQuery): Promise<ListPage<TokenSummary>> {
  const base = deps.db
    .selectFrom('tokens')
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    // Tokens exchanged for a workflow's OIDC token are nobody's to list or reuse.
    .where('source', 'in', ['user', 'github_app']);
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return {
    ...page,
    items: page.items.map((r) => ({
      id: r.id,
      name: r.name,
      prefix: r.prefix,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    })),
  };
}
