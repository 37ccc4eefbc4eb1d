import { ApiError } from '../../../../api/errors.ts';
import type { CreateOrganizationBody, Organization } from '../../../../api/schemas/organizations.ts';
import { newId } from '../../../core/ids.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { loadOrganization } from './load-organizations.ts';
import { checkPlanChange } from './set-plan.ts';

/** Creates an organization with the caller as its owner. */
export async function createOrganization(
  deps: Deps,
  actor: Actor,
  body: CreateOrganizationBody,
): Promise<Organization> {
  const plan = body.plan ?? deps.config.defaultPlan;
  checkPlanChange(deps, deps.config.defaultPlan, plan);
  const now = deps.clock.now().toISOString();
  const id = newId('org');
  try {
    await deps.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('organizations')
        .values({
          id,
          name: body.name,
          display_name: body.displayName ?? body.name,
          plan,
          personal_user_id: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await tx
        .insertInto('memberships')
        .values({
          id: newId('mem'),
          organization_id: id,
          email: actor.email,
          user_id: actor.userId,
          role: 'owner',
          invited_at: now,
          joined_at: now,
        })
        .execute();
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(body.name);
    throw err;
  }
  deps.tokens.invalidate();
  return loadOrganization(deps.db, actor.userId, id);
}

export const nameTaken = (name: string) =>
  ApiError.conflict(`An organization named "${name}" already exists; choose another name`);
