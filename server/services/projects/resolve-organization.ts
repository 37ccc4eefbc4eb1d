import { ApiError } from '../../../api/errors.ts';
import type { Actor, Deps } from '../deps.ts';

/** Resolves `org` given as an id or a name to an organization the caller belongs to. */
export async function resolveOrganization(deps: Deps, actor: Actor, idOrName: string) {
  const org = await deps.db
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .executeTakeFirst();
  if (!org) throw ApiError.notFound(`Organization ${idOrName}`);
  return org;
}
