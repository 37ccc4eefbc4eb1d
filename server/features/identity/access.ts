import { ApiError } from '../../../api/errors.ts';
import type { Role } from '../../../api/schemas/organizations.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import {
  type ProjectRow,
  type ProjectWithRole,
  readProjectWithRole,
} from '../../platform/deps/project-with-role.ts';

const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

export const roleAtLeast = (role: Role, min: Role) => RANK[role] >= RANK[min];

/** The caller's role in an organization, or null when not a member. */
export async function roleIn(deps: Deps, actor: Actor, organizationId: string): Promise<Role | null> {
  const row = await deps.db
    .selectFrom('memberships')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', actor.userId)
    .executeTakeFirst();
  return row?.role ?? null;
}

const WHAT: Record<Role, string> = {
  viewer: 'a member',
  developer: 'a developer, admin or owner',
  admin: 'an admin or owner',
  owner: 'an owner',
};

/**
 * Checks membership: a non-member sees NOT_FOUND (the resource might as well not exist),
 * a member below `min` gets FORBIDDEN.
 */
export async function requireRole(
  deps: Deps,
  actor: Actor,
  organizationId: string,
  min: Role,
  notFound: string,
): Promise<Role> {
  const role = await roleIn(deps, actor, organizationId);
  if (!role) throw ApiError.notFound(notFound);
  if (!roleAtLeast(role, min)) {
    throw ApiError.forbidden(`This needs the role of ${WHAT[min]} in the organization; you are ${role}`);
  }
  return role;
}

/** Loads a project that is not deleted and checks the caller's role in its organization. */
export async function requireProject(
  deps: Deps,
  actor: Actor,
  projectId: string,
  min: Role = 'viewer',
): Promise<{ project: ProjectRow; role: Role }> {
  // One query for the project and the caller's role: this runs on nearly every request. The
  // request's pipeline may have read it already, with the rate-limit count: the first check of
  // the request uses that read.
  let row: ProjectWithRole | null | undefined;
  if (actor.preloadedProject?.projectId === projectId) {
    row = actor.preloadedProject.row;
    actor.preloadedProject = undefined;
  } else {
    row = await readProjectWithRole(deps, actor.userId, projectId);
  }
  if (!row || !row.member_role) throw ApiError.notFound(`Project ${projectId}`);
  const { member_role: role, ...project } = row;
  if (!roleAtLeast(role, min)) {
    throw ApiError.forbidden(`This needs the role of ${WHAT[min]} in the organization; you are ${role}`);
  }
  return { project, role };
}
