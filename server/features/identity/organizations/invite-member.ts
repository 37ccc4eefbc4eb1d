import { ApiError } from '../../../../api/errors.ts';
import type { InviteMemberBody, Member } from '../../../../api/schemas/organizations.ts';
import { newId } from '../../../core/ids.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { requireOrganization } from './find-organization.ts';
import { lockOrganization, requireOwnerFor } from './owner-rules.ts';
import { toMember, type MembershipRow } from './to-member.ts';

/**
 * Admins and owners invite by e-mail. A user with that e-mail becomes an active member at once;
 * otherwise the invitation waits, and findOrCreateUser turns it active when the user is created.
 */
export async function inviteMember(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  body: InviteMemberBody,
): Promise<Member> {
  const { org, role } = await requireOrganization(deps, actor, idOrName, 'admin');
  if (body.role === 'owner') requireOwnerFor(role, 'invite an owner');
  const now = deps.clock.now().toISOString();
  const conflict = (status: string) =>
    ApiError.conflict(`${body.email} is already ${status} organization ${org.name}`);
  try {
    const row = await deps.db.transaction().execute(async (tx) => {
      await lockOrganization(tx, org.id, now);
      const existing = await tx
        .selectFrom('memberships')
        .select('user_id')
        .where('organization_id', '=', org.id)
        .where('email', '=', body.email)
        .executeTakeFirst();
      if (existing) throw conflict(existing.user_id ? 'a member of' : 'invited to');
      const user = await tx
        .selectFrom('users')
        .select('id')
        .where('email', '=', body.email)
        .executeTakeFirst();
      const values: MembershipRow = {
        id: newId('mem'),
        organization_id: org.id,
        email: body.email,
        user_id: user?.id ?? null,
        role: body.role,
        invited_at: now,
        joined_at: user ? now : null,
      };
      await tx.insertInto('memberships').values(values).execute();
      return values;
    });
    deps.tokens.invalidate();
    return toMember(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('a member of');
    throw err;
  }
}
