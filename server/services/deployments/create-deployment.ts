import type { CreateDeploymentBody, Deployment } from '../../../api/schemas/deployments.ts';
import type { SettleHook } from '../../payments/method.ts';
import { requireProject } from '../access.ts';
import { checkDeploymentFiles } from '../uploads/deployment-files.ts';
import type { Actor, Deps } from '../deps.ts';
import { assertDeployable } from './find-deployment.ts';
import { afterQueued, queueDeployment } from './queue-deployment.ts';
import { toDeployment } from './to-deployment.ts';

/**
 * Starts a deployment of a project (developer and up): of its repository, or of files uploaded
 * before (`files`, checked here: all uploaded by the organization, within the limits). `settle` (paid operations) runs inside the
 * transaction, so the payment commits with the deployment. The target defaults to production for
 * the project's own branch and to preview for any other branch.
 */
export async function createDeployment(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: CreateDeploymentBody,
  settle?: SettleHook,
): Promise<Deployment> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  assertDeployable(project);
  const branch = body.branch ?? project.branch;
  const files = body.files ? await checkDeploymentFiles(deps, project.organization_id, body.files) : null;
  const { row, deliveries } = await deps.db.transaction().execute(async (tx) => {
    await settle?.before(tx);
    const queued = await queueDeployment(tx, deps, project.name, {
      project_id: project.id,
      target: body.target ?? (branch === project.branch ? 'production' : 'preview'),
      branch,
      // Uploaded files are what they are: a commit only labels them.
      requested_commit: files ? null : (body.commitHash ?? null),
      // Shown until the build checks out the commit and records its full hash.
      commit_hash: body.commitHash ?? null,
      message: body.message ?? null,
      created_by: actor.userId,
      source: files ? (body.prebuilt ? 'prebuilt' : 'upload') : 'git',
      source_files: files ? JSON.stringify(files) : null,
      use_cache: body.cache === false ? 0 : 1,
    });
    await settle?.after(tx, queued.row.id);
    return queued;
  });
  afterQueued(deps, deliveries);
  return toDeployment(deps.urls, row);
}
