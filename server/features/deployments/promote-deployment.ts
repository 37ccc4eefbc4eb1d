import { ApiError } from '../../../api/errors.ts';
import type { Deployment } from '../../../api/schemas/deployments.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../platform/deps/routing-signal.ts';
import { signalDeployment } from './deployment-activity.ts';
import { notifyDeliveries, recordDeploymentEvent } from './deployment-events.ts';
import { assertDeployable, requireDeployment } from './find-deployment.ts';
import { toDeployment } from './to-deployment.ts';

/**
 * Makes a live preview the project's production deployment at once, reusing its build (and so
 * the preview's build-time environment); or makes an earlier live production deployment the
 * production one again. Developer and up. Records the extension event `deployment.promoted` in
 * the same transaction.
 */
export async function promoteDeployment(deps: Deps, actor: Actor, deploymentId: string): Promise<Deployment> {
  const { deployment, project } = await requireDeployment(deps, actor, deploymentId, 'developer');
  assertDeployable(project);
  if (deployment.id === project.production_deployment_id) {
    throw ApiError.conflict(`Deployment ${deployment.id} is already the production deployment`);
  }
  const now = deps.clock.now().toISOString();
  const row = await deps.db.transaction().execute(async (tx) => {
    // Conditional on the state read above still holding, so a concurrent promote loses cleanly.
    const res = await tx
      .updateTable('deployments')
      .set({ target: 'production', promoted_at: now, updated_at: now })
      .where('id', '=', deployment.id)
      .where('status', '=', 'live')
      .where('target', '=', deployment.target)
      .executeTakeFirst();
    const row = await tx
      .selectFrom('deployments')
      .selectAll()
      .where('id', '=', deployment.id)
      .executeTakeFirstOrThrow();
    if (Number(res.numUpdatedRows) !== 1) {
      throw ApiError.conflict(
        row.status === 'live'
          ? `Deployment ${row.id} was promoted meanwhile: it is already the production deployment`
          : `Deployment ${row.id} is ${row.status}; only a live deployment can be promoted, wait until it is live`,
      );
    }
    await tx
      .updateTable('projects')
      .set({ production_deployment_id: row.id, updated_at: now })
      .where('id', '=', row.project_id)
      .execute();
    const deliveries = await recordDeploymentEvent(tx, deps, row, 'deployment.promoted');
    return { ...row, deliveries };
  });
  notifyDeliveries(deps, row.deliveries);
  signalDeployment(deps, row.id);
  signalRoutingChange(deps, row.project_id);
  return toDeployment(deps.urls, row, project);
}
