import type { Organization } from '../../../../api/schemas/organizations.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { requireOrganization } from './find-organization.ts';
import { loadOrganization } from './load-organizations.ts';

/** Any member reads the organization. */
export async function getOrganization(deps: Deps, actor: Actor, idOrName: string): Promise<Organization> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'viewer');
  return loadOrganization(deps.db, actor.userId, org.id);
}
