import { ApiError } from '../../api/client/index.ts';
import type { SlipwayConfig } from '../config.ts';
import type { Bot } from '../context.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { pullKey } from '../lib/tag.ts';
import { commandFailedReply, nothingToRollBackReply, rollbackReply } from '../render/replies.ts';
import { shortSha } from '../render/format.ts';
import { updateComment } from './update-comment.ts';

/**
 * `/rollback`: production goes back to the deployment that was live before the current one, or
 * with `/rollback dpl_...` to that earlier production deployment, reusing its build. Returns the
 * reply; the comment keeps a line about it.
 */
export async function rollbackProduction(
  bot: Bot,
  gh: GitHubRepo,
  input: { pull: number; login: string; config: SlipwayConfig; to?: string | undefined },
): Promise<string> {
  if (input.to !== undefined && !/^dpl_[a-z0-9]+$/.test(input.to)) {
    return commandFailedReply(
      'rollback',
      `\`${input.to}\` is not a deployment id: write \`/rollback\` or \`/rollback dpl_...\`.`,
    );
  }
  return bot.locks.run(pullKey({ ...gh, pull: input.pull }), async () => {
    try {
      const project = await bot.slipway.projects.get(await bot.projects.resolveId(input.config));
      const from = project.productionDeploymentId;
      if (!from) return nothingToRollBackReply();
      const d = await bot.slipway.deployments.rollback(from, input.to ? { to: input.to } : {});
      await updateComment(bot, gh, input.pull, input.config.comment, (s) =>
        s.preview || s.production
          ? {
              ...s,
              notes: [
                ...s.notes,
                `⏪ @${input.login} rolled production back from \`${from}\` to ${shortSha(d.commitHash)} (\`${d.id}\`).`,
              ].slice(-5),
            }
          : null,
      );
      return rollbackReply(from, d);
    } catch (err) {
      if (err instanceof ApiError) return commandFailedReply('rollback', err.message);
      throw err;
    }
  });
}
