import type { PageQuery } from '../../../../api/schemas/common.ts';
import type { Organization } from '../../../../api/schemas/organizations.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import { organizationsOf, selectOrganizations, toOrganization } from './load-organizations.ts';

/** The caller's organizations, newest first. */
export async function listOrganizations(
  deps: Deps,
  actor: Actor,
  q: PageQuery,
): Promise<ListPage<Organization>> {
  const page = await readPage(
    selectOrganizations(deps.db, actor.userId),
    organizationsOf(deps.db, actor.userId),
    q,
    { time: 'o.created_at', id: 'o.id', key: (r) => [r.created_at, r.id] },
  );
  return { ...page, items: page.items.map(toOrganization) };
}
