import type { Bot } from '../context.ts';
import { loadRepoConfig } from '../github/load-config.ts';
import { parseTag, pullKey } from '../lib/tag.ts';
import { reportDeployment } from './report-deployment.ts';

/**
 * A service webhook said something happened to a deployment. The event's own data may be stale
 * (deliveries are retried and can arrive out of order), so the deployment is read again, inside
 * the pull request's lock, and its current state is what GitHub is shown.
 */
export async function syncDeployment(bot: Bot, deploymentId: string): Promise<void> {
  let tag = bot.tags.get(deploymentId);
  if (!tag) {
    tag = parseTag((await bot.slipway.deployments.get(deploymentId)).message) ?? undefined;
    // Not started by the bot (the API, the Action, a rollback): nothing to show on GitHub.
    if (!tag) return;
    bot.tags.set(deploymentId, tag);
  }
  const found = tag;
  const gh = await bot.github.forRepo(found);
  await bot.locks.run(pullKey(found), async () => {
    const deployment = await bot.slipway.deployments.get(deploymentId);
    const config = await loadRepoConfig(gh);
    await reportDeployment(
      bot,
      gh,
      found,
      deployment,
      config.kind === 'ok' ? config.config.comment : 'always',
    );
  });
}
