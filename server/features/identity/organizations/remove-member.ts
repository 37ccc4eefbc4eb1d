import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { roleAtLeast } from '../access.ts';
import { ApiError } from '../../../../api/errors.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';
import { requireOrganization } from './find-organization.ts';
import { findMembership, keepAnOwner, lockOrganization, requireOwnerFor } from './owner-rules.ts';

/**
 * Removes a member or cancels an invitation. Admins and owners remove others (only an owner removes
 * an owner); any member may remove themselves. The last active owner stays.
 */
export async function removeMember(deps: Deps, actor: Actor, idOrName: string, email: string): Promise<void> {
  const { org, role } = await requireOrganization(deps, actor, idOrName, 'viewer');
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (tx) => {
    await lockOrganization(tx, org.id, now);
    const target = await findMembership(tx, org.id, email);
    const self = target.user_id === actor.userId;
    if (!self) {
      if (!roleAtLeast(role, 'admin')) {
        throw ApiError.forbidden(`Only an admin or owner may remove other members; you are ${role}`);
      }
      if (target.role === 'owner') requireOwnerFor(role, 'remove an owner');
    }
    await keepAnOwner(tx, org, target, 'remove');
    await tx.deleteFrom('memberships').where('id', '=', target.id).execute();
  });
  deps.tokens.invalidate();
  // Their sign-in cookies on the organization's protected hosts end with their membership: the
  // edges keep each protected host's members with its routes (TargetProtection.members).
  const projects = await deps.db
    .selectFrom('projects')
    .select('id')
    .where('organization_id', '=', org.id)
    .execute();
  for (const { id } of projects) signalRoutingChange(deps, id);
}
