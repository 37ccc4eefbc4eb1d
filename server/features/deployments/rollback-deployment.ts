import { ApiError } from '../../../api/errors.ts';
import type { Deployment, RollbackBody } from '../../../api/schemas/deployments.ts';
import type { DeploymentRow } from './to-deployment.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { assertDeployable, requireDeployment } from './find-deployment.ts';
import { afterQueued, queueDeployment } from './queue-deployment.ts';
import { toDeployment } from './to-deployment.ts';

/**
 * Rolls the project back from production deployment `deploymentId` to the last production
 * deployment that went live before it, or to `to`, any production deployment that went live
 * before it. The answer is a new queued production deployment that reuses the earlier one's
 * build: the builder sees `source_deployment_id` and skips building.
 */
export async function rollbackDeployment(
  deps: Deps,
  actor: Actor,
  deploymentId: string,
  body: RollbackBody = {},
): Promise<Deployment> {
  const { deployment: from, project } = await requireDeployment(deps, actor, deploymentId, 'developer');
  assertDeployable(project);
  if (from.target !== 'production') {
    throw ApiError.conflict(
      `Deployment ${from.id} is a preview deployment; roll back from a production deployment (promote a preview instead)`,
    );
  }
  // When a deployment became production: a promoted preview at its promotion, others when live.
  // A deployment that never went live is rolled back from the moment it was created.
  const fromTime = from.promoted_at ?? from.ready_at ?? from.created_at;
  let query = deps.db
    .selectFrom('deployments')
    .selectAll()
    .where('project_id', '=', from.project_id)
    .where('target', '=', 'production')
    .where('status', '=', 'live')
    .where('id', '!=', from.id)
    .where((eb) => eb(eb.fn.coalesce('promoted_at', 'ready_at'), '<', fromTime));
  if (body.to) query = query.where('id', '=', body.to);
  const earlier = await query
    .orderBy((eb) => eb.fn.coalesce('promoted_at', 'ready_at'), 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!earlier && body.to) throw await unsuitableTarget(deps, from, body.to);
  if (!earlier) {
    throw ApiError.conflict(
      `No production deployment of project ${project.name} went live before ${from.id}; there is nothing to roll back to`,
    );
  }
  const { row, deliveries } = await deps.db.transaction().execute((tx) =>
    queueDeployment(tx, deps, project, {
      project_id: from.project_id,
      target: 'production',
      branch: earlier.branch,
      commit_hash: earlier.commit_hash,
      commit_message: earlier.commit_message,
      author: earlier.author,
      message: `Rollback from ${from.id} to ${earlier.id}`,
      rollback_from: from.id,
      source_deployment_id: earlier.id,
      artifact_id: earlier.artifact_id,
      created_by: actor.userId,
      // Reusing its build, it comes from where that one came from.
      source: earlier.source,
    }),
  );
  afterQueued(deps, deliveries);
  return toDeployment(deps.urls, row, project);
}

/** Why `to` cannot be rolled back to, in words: a 404 when it is not the project's, else a 409. */
async function unsuitableTarget(deps: Deps, from: DeploymentRow, to: string): Promise<ApiError> {
  const target = await deps.db
    .selectFrom('deployments')
    .selectAll()
    .where('id', '=', to)
    .where('project_id', '=', from.project_id)
    .executeTakeFirst();
  if (!target) return ApiError.notFound(`Deployment ${to} of this project`);
  if (target.id === from.id)
    return ApiError.conflict(`Deployment ${to} is the one rolled back from; choose an earlier one`);
  if (target.status !== 'live') {
    return ApiError.conflict(
      `Deployment ${to} is ${target.status}; only a deployment that went live can be rolled back to`,
    );
  }
  if (target.target !== 'production') {
    return ApiError.conflict(
      `Deployment ${to} is a preview that was never production; promote it instead (POST /v1/deployments/${to}/promote)`,
    );
  }
  return ApiError.conflict(
    `Deployment ${to} went live after ${from.id}; roll back only to an earlier deployment`,
  );
}
