import { ApiError } from '../../api/client/index.ts';
import type { SlipwayConfig } from '../config.ts';
import type { Bot } from '../context.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { getPull } from '../github/pulls.ts';
import { pullKey } from '../lib/tag.ts';
import { commandFailedReply, nothingToPromoteReply, promotedReply } from '../render/replies.ts';
import { findLivePreview } from '../service/find-live-preview.ts';
import { promotePreview } from './promote.ts';

/**
 * `/promote` and the Promote button: makes a live preview production. The command promotes the
 * live preview of the pull request's current head; the button passes the deployment of its check.
 * Returns the reply.
 */
export async function promoteFromPull(
  bot: Bot,
  gh: GitHubRepo,
  input: { pull: number; login: string; config: SlipwayConfig; deploymentId?: string },
): Promise<string> {
  return bot.locks.run(pullKey({ ...gh, pull: input.pull }), async () => {
    try {
      let deploymentId = input.deploymentId;
      let checkSha: string;
      if (deploymentId) {
        checkSha = (await bot.slipway.deployments.get(deploymentId)).commitHash ?? '';
      } else {
        const pr = await getPull(gh, input.pull);
        checkSha = pr.head.sha;
        const live = await findLivePreview(
          bot.slipway,
          await bot.projects.resolveId(input.config),
          pr.head.sha,
        );
        if (!live) return nothingToPromoteReply(pr.head.sha);
        deploymentId = live.id;
      }
      const { deployment, productionUrl } = await promotePreview(bot, gh, {
        pull: input.pull,
        deploymentId,
        checkSha,
        by: `@${input.login}`,
        mode: input.config.comment,
      });
      return promotedReply(deployment, productionUrl);
    } catch (err) {
      if (err instanceof ApiError) return commandFailedReply('promote', err.message);
      throw err;
    }
  });
}
