import { verifyGrant, type Grant } from '../../protection/protection-cookie.ts';
import type { Guarded } from '../resolve-host.ts';
import type { GateState } from './state.ts';

/**
 * A share link's cookie opens the host while its link is not revoked (TargetProtection.links); a
 * sign-in's while its member is still in the organization (TargetProtection.members). A cookie
 * that names neither (signed before cookies named their member) opens nothing: sign in again.
 */
export const allows = (g: GateState, grant: Grant | null, host: string, target: Guarded) =>
  grant !== null &&
  grant.projectId === target.projectId &&
  grant.host === host &&
  grant.expiresAt > g.deps.now().getTime() &&
  (grant.link !== undefined
    ? target.protection!.links.has(grant.link)
    : grant.user !== undefined && target.protection!.members.has(grant.user));

/** What a cookie's value grants: from the cache of verified values, or verified and kept. */
export const grantOf = async (g: GateState, value: string): Promise<Grant | null> => {
  const known = g.verified.get(value);
  if (known) return known;
  const grant = await verifyGrant(g.deps.key, value, g.deps.now());
  if (grant) g.verified.set(value, grant);
  return grant;
};
