import type { SlipwayConfig } from '../config.ts';
import type { Bot } from '../context.ts';
import { isOpen, listChecks, PREVIEW_CHECK, updateCheck } from '../github/checks.ts';
import { listPreviewDeployments, setDeploymentStatus } from '../github/deployments.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import type { PullRequest } from '../github/payloads.ts';
import { pullKey } from '../lib/tag.ts';
import { closedCheckOutput } from '../render/check.ts';
import { updateComment } from './update-comment.ts';

/**
 * A pull request closed without merging: every GitHub Deployment of its preview environment
 * becomes inactive, a preview check still running ends neutral, and the comment says closed.
 * The Slipway deployment keeps its URL (deployments live as long as their project).
 */
export async function handleClose(
  bot: Bot,
  gh: GitHubRepo,
  pr: PullRequest,
  config: SlipwayConfig,
): Promise<void> {
  await bot.locks.run(pullKey({ ...gh, pull: pr.number }), async () => {
    await deactivatePreviews(gh, pr.number, 'The pull request was closed');
    for (const run of await listChecks(gh, pr.head.sha, PREVIEW_CHECK)) {
      if (!isOpen(run)) continue;
      await updateCheck(
        gh,
        run.id,
        { status: 'completed', conclusion: 'neutral', output: closedCheckOutput() },
        bot.now(),
      );
    }
    await updateComment(bot, gh, pr.number, config.comment, (s) =>
      s.preview || s.production ? { ...s, closed: true } : null,
    );
  });
}

/**
 * Every GitHub Deployment of a pull request's preview environment becomes inactive: once the pull
 * request is closed, merged or not, its previews are history on GitHub (their URLs keep serving).
 */
export async function deactivatePreviews(gh: GitHubRepo, pull: number, description: string): Promise<void> {
  for (const d of await listPreviewDeployments(gh, pull)) {
    await setDeploymentStatus(gh, d.id, { state: 'inactive', description });
  }
}
