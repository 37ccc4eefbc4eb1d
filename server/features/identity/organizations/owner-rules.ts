import type { Kysely } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import type { Role } from '../../../../api/schemas/organizations.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { OrganizationRef } from './find-organization.ts';
import type { MembershipRow } from './to-member.ts';

/** Only an owner may give the owner role or act on an owner. */
export function requireOwnerFor(actorRole: Role, what: string): void {
  if (actorRole !== 'owner') {
    throw ApiError.forbidden(`Only an owner may ${what}; you are ${actorRole}`);
  }
}

/**
 * Serializes membership changes of one organization. Writing its row takes a row lock on
 * PostgreSQL (and the write lock on SQLite) until commit, so two owners removing each other at
 * the same time cannot both see "another owner is left" and leave the organization with none.
 */
export async function lockOrganization(tx: Kysely<Database>, organizationId: string, now: string) {
  await tx.updateTable('organizations').set({ updated_at: now }).where('id', '=', organizationId).execute();
}

/** The membership of `email`, read inside the locking transaction; NOT_FOUND when there is none. */
export async function findMembership(
  tx: Kysely<Database>,
  organizationId: string,
  email: string,
): Promise<MembershipRow> {
  const row = await tx
    .selectFrom('memberships')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('email', '=', email)
    .executeTakeFirst();
  if (!row) throw ApiError.notFound(`Member ${email}`);
  return row;
}

/**
 * Refuses a change that would leave the organization without an active owner, or take its owner
 * away from a personal organization. `target` is the membership losing its owner role (removed or
 * demoted). Invited owners do not count: nobody could act as them.
 */
export async function keepAnOwner(
  tx: Kysely<Database>,
  org: OrganizationRef,
  target: MembershipRow,
  change: 'remove' | 'demote',
): Promise<void> {
  if (target.user_id !== null && target.user_id === org.personalUserId) {
    throw ApiError.conflict(
      change === 'remove'
        ? `${target.email} cannot leave their personal organization ${org.name}`
        : `${target.email} stays the owner of their personal organization ${org.name}`,
    );
  }
  if (target.role !== 'owner' || target.user_id === null) return;
  const others = await tx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('organization_id', '=', org.id)
    .where('role', '=', 'owner')
    .where('user_id', 'is not', null)
    .where('id', '!=', target.id)
    .executeTakeFirstOrThrow();
  if (Number(others.n) === 0) {
    throw ApiError.conflict(
      `${target.email} is the last owner of organization ${org.name}; make another member owner first`,
    );
  }
}
