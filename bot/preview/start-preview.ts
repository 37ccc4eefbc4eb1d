import { ApiError } from '../../api/client/index.ts';
import type { SlipwayConfig } from '../config.ts';
import type { Bot } from '../context.ts';
import { createPreviewDeployment, setDeploymentStatus } from '../github/deployments.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { isFork, type PullRequest } from '../github/payloads.ts';
import { formatTag, type DeploymentTag } from '../lib/tag.ts';
import { previewCheckOutput, startErrorCheckOutput } from '../render/check.ts';
import { openPreviewCheck, pullExternalId } from './open-check.ts';
import { reportDeployment } from './report-deployment.ts';
import { updateComment } from './update-comment.ts';
import { accessOf } from '../render/access.ts';

/** A branch name the service accepts as is; anything else is built through the pull request's ref. */
const PLAIN_BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,255}$/;

/** What became of a preview request. */
export type StartResult = { kind: 'started'; deploymentId: string } | { kind: 'error'; message: string };

/**
 * Starts the preview of the pull request's head: a Slipway preview deployment pinned to the head
 * commit (a fork's head is fetched through `refs/pull/<n>/head`, since the fork is another
 * repository), the check, the GitHub Deployment and the comment. Call it holding the pull
 * request's lock.
 */
export async function startPreview(
  bot: Bot,
  gh: GitHubRepo,
  pr: PullRequest,
  config: SlipwayConfig,
  opts: { before?: string; idempotencyKey: string },
): Promise<StartResult> {
  const sha = pr.head.sha;
  const tag: DeploymentTag = { kind: 'preview', owner: gh.owner, repo: gh.repo, pull: pr.number, sha };
  let deployment;
  try {
    const projectId = await bot.projects.resolveId(config);
    await bot.webhooks.ensure(projectId);
    const branch =
      !isFork(pr) && PLAIN_BRANCH.test(pr.head.ref) ? pr.head.ref : `refs/pull/${pr.number}/head`;
    // Always `preview`: a pull request never builds with production's variables, even when its
    // branch is the production branch, and a fork's code sees only the preview ones.
    deployment = await bot.slipway.deployments.create(
      projectId,
      { branch, commitHash: sha, target: 'preview', message: formatTag(tag) },
      { idempotencyKey: opts.idempotencyKey },
    );
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    await openPreviewCheck(
      bot,
      gh,
      pr,
      { status: 'completed', conclusion: 'failure', output: startErrorCheckOutput(err.message) },
      pullExternalId(pr.number),
      opts.before,
    );
    return { kind: 'error', message: err.message };
  }
  bot.tags.set(deployment.id, tag);

  const check = await openPreviewCheck(
    bot,
    gh,
    pr,
    {
      status: 'in_progress',
      output: previewCheckOutput(deployment),
      ...(deployment.dashboardUrl ? { detailsUrl: deployment.dashboardUrl } : {}),
    },
    deployment.id,
    opts.before,
  );
  const githubDeployment = await createPreviewDeployment(gh, {
    sha,
    pull: pr.number,
    slipwayDeploymentId: deployment.id,
    description: `Slipway preview ${deployment.id}`,
  });
  await setDeploymentStatus(gh, githubDeployment, {
    state: 'in_progress',
    logUrl: check.url,
    description: 'Building the preview',
  });
  await updateComment(bot, gh, pr.number, config.comment, (s) => ({
    ...s,
    closed: false,
    preview: {
      deploymentId: deployment.id,
      sha,
      status: deployment.status,
      url: deployment.url,
      branchUrl: deployment.branchUrl ?? null,
      logsUrl: check.url,
      dashboardUrl: deployment.dashboardUrl ?? null,
      error: null,
      ...accessOf(deployment),
    },
  }));
  // Events that arrived while this was being set up found no check to update: catch up now.
  await reportDeployment(bot, gh, tag, await bot.slipway.deployments.get(deployment.id), config.comment);
  return { kind: 'started', deploymentId: deployment.id };
}
