import type { Deployment } from '../../api/schemas/deployments.ts';
import type { CommentMode } from '../config.ts';
import type { Bot } from '../context.ts';
import { createCheck, PRODUCTION_CHECK } from '../github/checks.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { productionCheckOutput } from '../render/check.ts';
import { updateComment } from './update-comment.ts';

/**
 * Promotes a live preview to production (no rebuild) and reports it: a completed "Slipway
 * Production" check on `checkSha` (the merge commit, or the pull request's head) and the
 * production line of the comment. Throws the service's ApiError when it refuses.
 */
export async function promotePreview(
  bot: Pick<Bot, 'now' | 'slipway'>,
  gh: GitHubRepo,
  input: { pull: number; deploymentId: string; checkSha: string; by: string; mode: CommentMode },
): Promise<{ deployment: Deployment; productionUrl: string | null }> {
  const deployment = await bot.slipway.deployments.promote(input.deploymentId);
  const productionUrl = (await bot.slipway.projects.get(deployment.projectId)).deploymentUrl;
  await createCheck(gh, {
    name: PRODUCTION_CHECK,
    sha: input.checkSha,
    externalId: deployment.id,
    now: bot.now(),
    status: 'completed',
    conclusion: 'success',
    output: productionCheckOutput(deployment, 'promoted', productionUrl),
    ...(deployment.dashboardUrl
      ? { detailsUrl: deployment.dashboardUrl }
      : productionUrl
        ? { detailsUrl: productionUrl }
        : {}),
  });
  await updateComment(bot, gh, input.pull, input.mode, (s) => ({
    ...s,
    production: {
      deploymentId: deployment.id,
      how: 'promoted',
      by: input.by,
      sha: deployment.commitHash,
      branch: deployment.branch,
      status: deployment.status,
      url: productionUrl,
      error: null,
    },
  }));
  return { deployment, productionUrl };
}
