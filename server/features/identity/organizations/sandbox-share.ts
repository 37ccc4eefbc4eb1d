import type { SandboxShare } from '../../../platform/sandbox/index.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import type { PlanName } from '../../../core/plan-limits.ts';

/**
 * What one sandbox of a project may use as a whole, from its organization's plan
 * (config.plans, SLIPWAY_<PLAN>_LIMITS): a build's memory (checkout, install and build) or a
 * server app's, and the plan's CPU share.
 */
export async function sandboxShare(
  deps: Pick<Deps, 'db' | 'config'>,
  projectId: string,
  use: 'build' | 'app',
): Promise<SandboxShare> {
  const plan = await planOfProject(deps, projectId);
  const limits = deps.config.plans[plan];
  return {
    plan,
    memoryBytes: use === 'build' ? limits.memoryBytes : limits.appMemoryBytes,
    cpu: limits.cpu,
    cpuCap: limits.cpuCap,
  };
}

/** The plan of a project's organization; throws when the project is gone. */
export async function planOfProject(deps: Pick<Deps, 'db'>, projectId: string): Promise<PlanName> {
  const { plan } = await deps.db
    .selectFrom('projects as p')
    .innerJoin('organizations as o', 'o.id', 'p.organization_id')
    .select('o.plan')
    .where('p.id', '=', projectId)
    .executeTakeFirstOrThrow();
  return plan;
}
