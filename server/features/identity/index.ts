/**
 * The public entry of the identity feature: users, tokens, organizations, access checks, OIDC trust and sign-in sessions.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { requireProject, requireRole, roleAtLeast, roleIn } from './access.ts';
export { requireOrganization } from './organizations/find-organization.ts';
export { getOrganization } from './organizations/get-organization.ts';
export { inviteMember } from './organizations/invite-member.ts';
export { listMembers } from './organizations/list-members.ts';
export { listOrganizations } from './organizations/list-organizations.ts';
export { removeMember } from './organizations/remove-member.ts';
export { setOrganizationPlan } from './organizations/set-plan.ts';
export { updateMember } from './organizations/update-member.ts';
export { organizationRoutes } from './routes/organizations.ts';
export { trustRoutes } from './routes/trust.ts';
export { userRoutes } from './routes/user.ts';
export {
  closeSession,
  cookieValue,
  csrfMatches,
  deleteExpiredSessions,
  openSession,
  readSession,
  sessionCookie,
} from './sessions/dashboard-session.ts';
export type { Session } from './sessions/dashboard-session.ts';
export { PLACEHOLDER_ORIGIN, returnPath } from './sessions/return-path.ts';
export { pruneUsedOidcTokens } from './trust/used-tokens.ts';
export { createToken } from './users/create-token.ts';
export { findOrCreateUser } from './users/find-or-create-user.ts';
