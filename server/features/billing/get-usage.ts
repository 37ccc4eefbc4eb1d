import type { OrganizationUsage } from '../../../api/schemas/organizations.ts';
import { buildCacheStoreOf } from '../builds/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { uploadUsage } from '../uploads/index.ts';
import { requireOrganization } from '../identity/index.ts';

/** Any member reads what the organization keeps against its plan's storage and cache quotas. */
export async function getUsage(deps: Deps, actor: Actor, idOrName: string): Promise<OrganizationUsage> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'viewer');
  const { plan } = await deps.db
    .selectFrom('organizations')
    .select('plan')
    .where('id', '=', org.id)
    .executeTakeFirstOrThrow();
  const projects = await deps.db
    .selectFrom('projects')
    .select('id')
    .where('organization_id', '=', org.id)
    .execute();
  const caches = buildCacheStoreOf(deps.config);
  const limits = deps.config.plans[plan];
  return {
    plan,
    storage: { usedBytes: await uploadUsage(deps, org.id), limitBytes: limits.storageBytes },
    buildCaches: {
      usedBytes: await caches.usage(projects.map((p) => p.id)),
      limitBytes: limits.cacheBytes,
    },
  };
}
