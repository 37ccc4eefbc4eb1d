import { ApiError } from '../../../api/errors.ts';
import type { Deployment } from '../../../api/schemas/deployments.ts';
import { type BuildSpec, decodeBuildSpec, encodeBuildSpec } from '../../platform/store/build-spec.ts';
import { cacheLanes } from '../../platform/store/cache-lanes.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { assertDeployable, requireDeployment } from './find-deployment.ts';
import { afterQueued, queueDeployment } from './queue-deployment.ts';
import { toDeployment } from './to-deployment.ts';

/**
 * Builds deployment `deploymentId` again, as it was built: its build spec (settings, framework,
 * cache, target) and its commit, whatever the project's settings and its branch's head are now.
 * A rollback is redeployed as the deployment whose build it reused. `cache` overrides whether
 * the build uses the project's build cache (the dashboard's "Use the build cache" box); left out,
 * it is as it was. Answers the new deployment.
 */
export async function redeployDeployment(
  deps: Deps,
  actor: Actor,
  deploymentId: string,
  opts: { cache?: boolean } = {},
): Promise<Deployment> {
  const { deployment, project } = await requireDeployment(deps, actor, deploymentId, 'developer');
  assertDeployable(project);
  let built = deployment;
  if (deployment.source_deployment_id) {
    built = (await requireDeployment(deps, actor, deployment.source_deployment_id, 'developer')).deployment;
  }
  if (!built.build_spec) throw ApiError.conflict(`Deployment ${built.id} has no build to repeat`);
  const spec = decodeBuildSpec(built.id, built.build_spec);
  // The same code: the commit it checked out, when it got that far.
  const source: BuildSpec['source'] =
    spec.source.kind === 'git' && built.commit_hash
      ? { ...spec.source, commit: built.commit_hash }
      : spec.source;
  const { row, deliveries } = await deps.db.transaction().execute((tx) =>
    queueDeployment(tx, deps, project, {
      project_id: project.id,
      target: spec.target,
      branch: built.branch,
      commit_hash: source.kind === 'git' ? source.commit : built.commit_hash,
      message: `Redeploy of ${deployment.id}`,
      created_by: actor.userId,
      source: source.kind,
      build_spec: encodeBuildSpec({
        ...spec,
        source,
        cache: cacheOf(spec, opts.cache, built.branch, project.branch),
      }),
    }),
  );
  afterQueued(deps, deliveries);
  return toDeployment(deps.urls, row, project);
}

/** The cache lanes of a rebuild: as built, none, or the lanes a build of that target and branch uses. */
function cacheOf(
  spec: BuildSpec,
  cache: boolean | undefined,
  branch: string,
  productionBranch: string,
): BuildSpec['cache'] {
  if (cache === undefined) return spec.cache;
  return cache ? cacheLanes({ target: spec.target, ref: branch }, productionBranch) : null;
}
