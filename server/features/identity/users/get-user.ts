import type { User } from '../../../../api/schemas/user.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';

/** The caller, with the organizations they are a member of and their role in each. */
export async function getUser(deps: Deps, actor: Actor): Promise<User> {
  const orgs = await deps.db
    .selectFrom('memberships as m')
    .innerJoin('organizations as o', 'o.id', 'm.organization_id')
    .select(['o.id', 'o.name', 'm.role', 'o.plan'])
    .where('m.user_id', '=', actor.userId)
    .orderBy('o.created_at')
    .orderBy('o.id')
    .execute();
  return { id: actor.userId, email: actor.email, organizations: orgs };
}
