import type { Organization } from '../../../api/schemas/organizations.ts';
import type { Actor, Deps } from '../deps.ts';
import { organizationsOf, selectOrganizations, toOrganization } from './load-organizations.ts';

/** The caller's organizations, newest first. */
export async function listOrganizations(
  deps: Deps,
  actor: Actor,
  page: { limit: number; offset: number },
): Promise<{ items: Organization[]; total: number }> {
  const [rows, count] = await Promise.all([
    selectOrganizations(deps.db, actor.userId)
      .orderBy('o.created_at', 'desc')
      .orderBy('o.id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    organizationsOf(deps.db, actor.userId)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toOrganization), total: Number(count.n) };
}
