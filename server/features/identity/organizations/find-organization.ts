import { ApiError } from '../../../../api/errors.ts';
import type { Role } from '../../../../api/schemas/organizations.ts';
import { requireRole } from '../access.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';

export interface OrganizationRef {
  id: string;
  name: string;
  /** The user whose personal organization this is, if any. */
  personalUserId: string | null;
}

/**
 * Resolves an organization given by id or name and checks the caller's role in it: a non-member
 * sees NOT_FOUND, as if it did not exist; a member below `min` gets FORBIDDEN.
 */
export async function requireOrganization(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  min: Role,
): Promise<{ org: OrganizationRef; role: Role }> {
  const row = await deps.db
    .selectFrom('organizations')
    .select(['id', 'name', 'personal_user_id'])
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .executeTakeFirst();
  if (!row) throw ApiError.notFound(`Organization ${idOrName}`);
  const role = await requireRole(deps, actor, row.id, min, `Organization ${idOrName}`);
  return { org: { id: row.id, name: row.name, personalUserId: row.personal_user_id }, role };
}
