import type { Member } from '../../../api/schemas/organizations.ts';
import type { Actor, Deps } from '../deps.ts';
import { requireOrganization } from './find-organization.ts';
import { toMember } from './to-member.ts';

/** Every member and invitation of the organization, newest first; any member may list them. */
export async function listMembers(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  page: { limit: number; offset: number },
): Promise<{ items: Member[]; total: number }> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'viewer');
  const base = deps.db.selectFrom('memberships').where('organization_id', '=', org.id);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('invited_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toMember), total: Number(count.n) };
}
