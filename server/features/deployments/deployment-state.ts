import type { Updateable } from 'kysely';
import { ApiError } from '../../../api/errors.ts';
import type { Deployment, DeploymentStatus } from '../../../api/schemas/deployments.ts';
import type { DeploymentsTable } from '../../platform/store/schema.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../platform/deps/routing-signal.ts';
import { advanceBranchAlias } from './branch-alias.ts';
import { signalDeployment } from './deployment-activity.ts';
import { notifyDeliveries, recordDeploymentEvent, type DeploymentEvent } from './deployment-events.ts';
import { toDeployment } from './to-deployment.ts';

/** What the state machine needs; the builder passes its Deps. */
export type StateDeps = Pick<Deps, 'db' | 'clock' | 'queue' | 'urls' | 'store'>;

/** Which states each state may be entered from. `live` and `failed` are final. */
const ENTERED_FROM: Record<Exclude<DeploymentStatus, 'queued'>, DeploymentStatus[]> = {
  building: ['queued'],
  deploying: ['building'],
  live: ['deploying'],
  failed: ['queued', 'building', 'deploying'],
};

const EVENT: Record<Exclude<DeploymentStatus, 'queued'>, DeploymentEvent> = {
  building: 'deployment.building',
  deploying: 'deployment.deploying',
  live: 'deployment.success',
  failed: 'deployment.failed',
};

/**
 * Moves a deployment to `to` and records the webhook event in the same transaction. The update
 * is conditional on the current state, so two racing workers cannot both make a transition.
 */
async function transition(
  deps: StateDeps,
  deploymentId: string,
  to: Exclude<DeploymentStatus, 'queued'>,
  changes: Omit<Updateable<DeploymentsTable>, 'status' | 'updated_at'>,
): Promise<Deployment> {
  const now = deps.clock.now().toISOString();
  const { row, deliveries } = await deps.db.transaction().execute(async (tx) => {
    const res = await tx
      .updateTable('deployments')
      .set({ ...changes, status: to, updated_at: now })
      .where('id', '=', deploymentId)
      .where('status', 'in', ENTERED_FROM[to])
      .executeTakeFirst();
    const row = await tx
      .selectFrom('deployments')
      .selectAll()
      .where('id', '=', deploymentId)
      .executeTakeFirst();
    if (!row) throw ApiError.notFound(`Deployment ${deploymentId}`);
    if (Number(res.numUpdatedRows) !== 1) {
      throw ApiError.conflict(
        `Deployment ${deploymentId} is ${row.status}; it can become ${to} only from ${ENTERED_FROM[to].join(' or ')}`,
      );
    }
    // The production switch commits with the deployment going live, never apart from it.
    if (to === 'live' && row.target === 'production') {
      await tx
        .updateTable('projects')
        .set({ production_deployment_id: row.id, updated_at: now })
        .where('id', '=', row.project_id)
        .execute();
    }
    // Likewise a preview's branch URL moves to it (forward only) as it goes live.
    if (to === 'live' && row.target === 'preview') {
      const branchHost = await advanceBranchAlias(tx, now, row);
      return {
        row: { ...row, branch_host: branchHost },
        deliveries: await recordDeploymentEvent(tx, deps, row, EVENT[to]),
      };
    }
    return { row, deliveries: await recordDeploymentEvent(tx, deps, row, EVENT[to]) };
  });
  notifyDeliveries(deps, deliveries);
  signalDeployment(deps, deploymentId);
  // The deployment's URL answers by its state, and going live may switch production or move a
  // branch URL.
  signalRoutingChange(deps, row.project_id);
  return toDeployment(deps.urls, row);
}

/** The builder started: records the checked-out commit when known. */
export function markBuilding(
  deps: StateDeps,
  deploymentId: string,
  commit: { commitHash?: string; commitMessage?: string; author?: string } = {},
): Promise<Deployment> {
  return transition(deps, deploymentId, 'building', {
    started_at: deps.clock.now().toISOString(),
    ...(commit.commitHash === undefined ? {} : { commit_hash: commit.commitHash.toLowerCase() }),
    ...(commit.commitMessage === undefined ? {} : { commit_message: commit.commitMessage }),
    ...(commit.author === undefined ? {} : { author: commit.author }),
  });
}

/** The build succeeded and produced `artifactId`; the deployment is being brought up. */
export function markDeploying(
  deps: StateDeps,
  deploymentId: string,
  result: { buildDurationMs: number; artifactId: string },
): Promise<Deployment> {
  return transition(deps, deploymentId, 'deploying', {
    build_duration_ms: Math.round(result.buildDurationMs),
    artifact_id: result.artifactId,
  });
}

/**
 * The deployment serves; a production deployment becomes the project's production deployment, a
 * preview its branch URL's (unless a newer preview of the branch is already live).
 */
export function markLive(
  deps: StateDeps,
  deploymentId: string,
  result: { deployDurationMs: number },
): Promise<Deployment> {
  return transition(deps, deploymentId, 'live', {
    deploy_duration_ms: Math.round(result.deployDurationMs),
    ready_at: deps.clock.now().toISOString(),
  });
}

/** The deployment failed for good; `errorMessage` says why, for the user. */
export function markFailed(deps: StateDeps, deploymentId: string, errorMessage: string): Promise<Deployment> {
  return transition(deps, deploymentId, 'failed', { error_message: errorMessage.slice(0, 4000) });
}
