import { ApiError } from '../../../api/errors.ts';
import type { CreateDeploymentBody, Deployment } from '../../../api/schemas/deployments.ts';
import type { SettleHook } from './settle-hook.ts';
import { requireProject } from '../identity/index.ts';
import { checkDeploymentFiles } from '../uploads/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { type BuildSpec, decideBuildSpec, encodeBuildSpec } from '../../platform/store/build-spec.ts';
import { NO_REPOSITORY } from './projects/stored-repository.ts';
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
  if (!body.files && project.repository_url === NO_REPOSITORY) {
    throw ApiError.validation([
      {
        path: 'files',
        message: `is required: project ${project.name} has no repository to build from, so it deploys uploaded files only (\`slipway deploy\` in a folder, or files in this body: docs/api/uploads.md); to build from git, give it one with PATCH /v1/projects/${project.id} {"repositoryUrl":"..."}`,
      },
    ]);
  }
  const branch = body.branch ?? project.branch;
  const files = body.files ? await checkDeploymentFiles(deps, project.organization_id, body.files) : null;
  const target = body.target ?? (branch === project.branch ? 'production' : 'preview');
  const source: BuildSpec['source'] = files
    ? { kind: body.prebuilt ? 'prebuilt' : 'upload', files }
    : // Uploaded files are what they are: a commit only labels them.
      { kind: 'git', ref: branch, commit: body.commitHash ?? null };
  const spec = decideBuildSpec(project, { target, branch, source, cache: body.cache !== false });
  const { row, deliveries } = await deps.db.transaction().execute(async (tx) => {
    await settle?.before(tx);
    const queued = await queueDeployment(tx, deps, project, {
      project_id: project.id,
      target,
      branch,
      // Shown until the build checks out the commit and records its full hash.
      commit_hash: body.commitHash ?? null,
      message: body.message ?? null,
      created_by: actor.userId,
      source: source.kind,
      build_spec: encodeBuildSpec(spec),
    });
    await settle?.after(tx, queued.row.id);
    return queued;
  });
  afterQueued(deps, deliveries);
  return toDeployment(deps.urls, row, project);
}
