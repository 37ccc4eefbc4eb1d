import { ApiError } from '../../../../api/errors.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';

/** Revokes one of the caller's tokens; it stops working at once, in every process. */
export async function revokeToken(deps: Deps, actor: Actor, tokenId: string): Promise<void> {
  const res = await deps.db
    .updateTable('tokens')
    .set({ revoked_at: deps.clock.now().toISOString() })
    .where('id', '=', tokenId)
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw ApiError.notFound(`Token ${tokenId}`);
  deps.tokens.invalidate();
}
