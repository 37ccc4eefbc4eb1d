import type { Kysely } from 'kysely';
import type { Organization } from '../../../../api/schemas/organizations.ts';
import type { Database } from '../../../platform/store/schema.ts';

/**
 * The caller's organizations with their counts and the caller's role, as one query.
 * `memberCount` counts active members only: an invitation nobody has accepted is not a member yet.
 */
export function organizationsOf(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('organizations as o', 'o.id', 'm.organization_id')
    .where('m.user_id', '=', userId);
}

export function selectOrganizations(db: Kysely<Database>, userId: string) {
  return organizationsOf(db, userId).select((eb) => [
    'o.id',
    'o.name',
    'o.display_name',
    'o.plan',
    'o.personal_user_id',
    'o.created_at',
    'm.role',
    eb
      .selectFrom('memberships as mc')
      .select((e) => e.fn.countAll().as('n'))
      .whereRef('mc.organization_id', '=', 'o.id')
      .where('mc.user_id', 'is not', null)
      .as('member_count'),
    eb
      .selectFrom('projects as p')
      .select((e) => e.fn.countAll().as('n'))
      .whereRef('p.organization_id', '=', 'o.id')
      .where('p.deleted_at', 'is', null)
      .as('project_count'),
  ]);
}

type OrganizationRow = Awaited<ReturnType<ReturnType<typeof selectOrganizations>['executeTakeFirstOrThrow']>>;

export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    plan: row.plan,
    // PostgreSQL answers counts as strings (bigint).
    memberCount: Number(row.member_count ?? 0),
    projectCount: Number(row.project_count ?? 0),
    personal: row.personal_user_id !== null,
    createdAt: row.created_at,
    role: row.role,
  };
}

/** One organization as the given member sees it. */
export async function loadOrganization(
  db: Kysely<Database>,
  userId: string,
  organizationId: string,
): Promise<Organization> {
  const row = await selectOrganizations(db, userId)
    .where('o.id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return toOrganization(row);
}
