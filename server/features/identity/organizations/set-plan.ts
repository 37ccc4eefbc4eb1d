import { ApiError } from '../../../../api/errors.ts';
import type { Plan } from '../../../../api/schemas/organizations.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

/**
 * With `SLIPWAY_PLAN_CHANGES=operator` a plan (and so a rate-limit tier) is the operator's
 * decision: members may not choose one, neither by PATCH nor by creating an organization on it.
 * Asking for the plan an organization already has changes nothing and is allowed.
 */
export function checkPlanChange(deps: Pick<Deps, 'config'>, current: Plan, wanted: Plan | undefined): void {
  if (wanted === undefined || wanted === current || deps.config.planChanges === 'members') return;
  throw ApiError.forbidden(
    `Plans are set by this server's operator: ask them to run \`slipway org plan <organization> ${wanted}\``,
  );
}

/** The operator's command (`slipway org plan`): sets the plan of an organization given by id or name. */
export async function setOrganizationPlan(
  deps: Deps,
  idOrName: string,
  plan: Plan,
): Promise<{ id: string; name: string; previous: Plan }> {
  const org = await deps.db
    .selectFrom('organizations')
    .select(['id', 'name', 'plan'])
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .executeTakeFirst();
  if (!org) throw ApiError.notFound(`Organization ${idOrName}`);
  await deps.db
    .updateTable('organizations')
    .set({ plan, updated_at: deps.clock.now().toISOString() })
    .where('id', '=', org.id)
    .execute();
  // Every process drops the rate-limit tiers it remembers.
  deps.tokens.invalidate();
  return { id: org.id, name: org.name, previous: org.plan };
}
