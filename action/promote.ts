import type { Deployment } from '../api/schemas/deployments.ts';
import { idempotencyKey } from './idempotency.ts';
import { refreshProductionUrl, settle } from './settle.ts';
import { describe, postForDeployment, type Step, type StepResult } from './step.ts';

/**
 * `command: promote`: makes a live preview the production deployment at once, without a
 * rebuild: `deployment-id`, else the latest live preview of `commit` (default: the event's
 * commit, which on a pull_request event is the PR head). A deployment that already is production
 * is left as it is, so a re-run changes nothing.
 */
export async function promote(step: Step, result: StepResult): Promise<void> {
  const { inputs, ctx, runner } = step;
  const project = result.project;
  const chosen = inputs.deploymentId
    ? await step.client.deployments.get(inputs.deploymentId)
    : await latestLivePreview(step, project.id, inputs.commit ?? ctx.commit);
  if (chosen.projectId !== project.id) {
    throw new Error(
      `Deployment ${chosen.id} belongs to another project than ${project.name} (${project.id}).`,
    );
  }
  if (chosen.target === 'production' && chosen.id === project.productionDeploymentId) {
    runner.notice(
      `${describe(chosen)} already is the production deployment of ${project.name}: nothing to promote.`,
    );
    result.deployment = chosen;
    result.history.push({ action: 'already production', deployment: chosen });
    return;
  }
  const key = idempotencyKey(ctx.run, 'promote', inputs.project, chosen.id);
  const answer = await postForDeployment(
    step.client,
    `/v1/deployments/${encodeURIComponent(chosen.id)}/promote`,
    key,
  );
  const promoted = answer.deployment;
  result.replayed = answer.replayed;
  result.deployment = promoted;
  result.history.push({ action: 'promote', deployment: promoted });
  runner.info(`Promoted ${describe(promoted)} to production of ${project.name}, without a rebuild.`);
  await step.reporter.started(promoted, project, 'promote');
  // Already live: settling reads the production URL and runs the health check and its rollback.
  if (inputs.wait) await settle(step, result, promoted, true);
  else await refreshProductionUrl(step, result);
}

/** The newest live preview of a commit, or its newest promoted one: then the promotion already happened. */
async function latestLivePreview(
  step: Step,
  projectId: string,
  commit: string | undefined,
): Promise<Deployment> {
  if (!commit) {
    throw new Error("promote needs deployment-id, or a commit (the commit input, or the event's commit)");
  }
  const { data } = await step.client.deployments.list(projectId, {
    commitHash: commit,
    status: 'live',
    limit: 20,
  });
  // Newest first: an older preview of the same commit must not win over the one already promoted.
  const preview = data.find((d) => d.target === 'preview' || d.promotedAt !== null);
  if (!preview) {
    throw new Error(
      `No live preview deployment of commit ${commit.slice(0, 7)} in this project: deploy it as a preview first, or give deployment-id.`,
    );
  }
  return preview;
}
