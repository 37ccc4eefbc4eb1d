import type { Member, UpdateMemberBody } from '../../../../api/schemas/organizations.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { requireOrganization } from './find-organization.ts';
import { findMembership, keepAnOwner, lockOrganization, requireOwnerFor } from './owner-rules.ts';
import { toMember } from './to-member.ts';

/** Admins and owners change a member's role; only an owner grants or takes away `owner`. */
export async function updateMember(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  email: string,
  body: UpdateMemberBody,
): Promise<Member> {
  const { org, role } = await requireOrganization(deps, actor, idOrName, 'admin');
  const now = deps.clock.now().toISOString();
  return deps.db.transaction().execute(async (tx) => {
    await lockOrganization(tx, org.id, now);
    const target = await findMembership(tx, org.id, email);
    if (target.role === 'owner' || body.role === 'owner') requireOwnerFor(role, 'grant or change an owner');
    if (target.role === body.role) return toMember(target);
    if (target.role === 'owner') await keepAnOwner(tx, org, target, 'demote');
    await tx.updateTable('memberships').set({ role: body.role }).where('id', '=', target.id).execute();
    return toMember({ ...target, role: body.role });
  });
}
