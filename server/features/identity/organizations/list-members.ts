import type { Member } from '../../../../api/schemas/organizations.ts';
import type { PageQuery } from '../../../../api/schemas/common.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import { requireOrganization } from './find-organization.ts';
import { toMember } from './to-member.ts';

/** Every member and invitation of the organization, newest first; any member may list them. */
export async function listMembers(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  q: PageQuery,
): Promise<ListPage<Member>> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'viewer');
  const base = deps.db.selectFrom('memberships').where('organization_id', '=', org.id);
  const page = await readPage(base.selectAll(), base, q, {
    time: 'invited_at',
    id: 'id',
    key: (r) => [r.invited_at, r.id],
  });
  return { ...page, items: page.items.map(toMember) };
}
