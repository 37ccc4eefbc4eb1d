import type { Organization, UpdateOrganizationBody } from '../../../../api/schemas/organizations.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { nameTaken } from './create-organization.ts';
import { requireOrganization } from './find-organization.ts';
import { checkPlanChange } from './set-plan.ts';
import { loadOrganization } from './load-organizations.ts';

/** Admins and owners rename an organization or change its display name or plan (see set-plan.ts). */
export async function updateOrganization(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  body: UpdateOrganizationBody,
): Promise<Organization> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'admin');
  if (body.plan !== undefined) {
    const { plan } = await deps.db
      .selectFrom('organizations')
      .select('plan')
      .where('id', '=', org.id)
      .executeTakeFirstOrThrow();
    checkPlanChange(deps, plan, body.plan);
  }
  try {
    await deps.db
      .updateTable('organizations')
      .set({
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.displayName === undefined ? {} : { display_name: body.displayName }),
        ...(body.plan === undefined ? {} : { plan: body.plan }),
        updated_at: deps.clock.now().toISOString(),
      })
      .where('id', '=', org.id)
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(body.name ?? org.name);
    throw err;
  }
  if (body.plan !== undefined) deps.tokens.invalidate();
  return loadOrganization(deps.db, actor.userId, org.id);
}
