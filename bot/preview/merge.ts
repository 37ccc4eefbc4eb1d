import { ApiError } from '../../api/client/index.ts';
import type { SlipwayConfig } from '../config.ts';
import type { Bot } from '../context.ts';
import { createCheck, PRODUCTION_CHECK } from '../github/checks.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import type { PullRequest } from '../github/payloads.ts';
import { type DeploymentTag, formatTag, pullKey } from '../lib/tag.ts';
import { productionCheckOutput } from '../render/check.ts';
import { shortSha } from '../render/format.ts';
import { findLivePreview } from '../service/find-live-preview.ts';
import { promotePreview } from './promote.ts';
import { reportDeployment } from './report-deployment.ts';
import { updateComment } from './update-comment.ts';

/**
 * A merged pull request, with `promoteOnMerge`: the live preview of exactly the merged head
 * commit becomes production, so what was reviewed is what ships. Without one (never built,
 * failed, still building) a production deployment of the base branch starts instead, and the
 * comment says so. Merges into any branch but the project's production branch promote nothing.
 */
export async function handleMerge(
  bot: Bot,
  gh: GitHubRepo,
  pr: PullRequest,
  config: SlipwayConfig,
  idempotencyKey: string,
): Promise<void> {
  if (!config.promoteOnMerge) return;
  await bot.locks.run(pullKey({ ...gh, pull: pr.number }), async () => {
    const mergeSha = pr.merge_commit_sha ?? pr.head.sha;
    const note = (line: string) =>
      updateComment(bot, gh, pr.number, config.comment, (s) => ({
        ...s,
        notes: [...s.notes, line].slice(-5),
      }));
    let project;
    try {
      project = await bot.slipway.projects.get(await bot.projects.resolveId(config));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      await note(`⚠️ Merged, but nothing was promoted: ${err.message}`);
      return;
    }
    if (pr.base.ref !== project.branch) {
      await note(
        `ℹ️ Merged into \`${pr.base.ref}\`, which is not the production branch of ${project.name} (\`${project.branch}\`): nothing was promoted.`,
      );
      return;
    }
    try {
      const live = await findLivePreview(bot.slipway, project.id, pr.head.sha);
      if (live) {
        await promotePreview(bot, gh, {
          pull: pr.number,
          deploymentId: live.id,
          checkSha: mergeSha,
          by: 'the merge',
          mode: config.comment,
        });
        return;
      }
      await bot.webhooks.ensure(project.id);
      const tag: DeploymentTag = {
        kind: 'merge',
        owner: gh.owner,
        repo: gh.repo,
        pull: pr.number,
        sha: mergeSha,
      };
      const d = await bot.slipway.deployments.create(
        project.id,
        { branch: pr.base.ref, target: 'production', message: formatTag(tag) },
        { idempotencyKey },
      );
      bot.tags.set(d.id, tag);
      await createCheck(gh, {
        name: PRODUCTION_CHECK,
        sha: mergeSha,
        externalId: d.id,
        now: bot.now(),
        status: 'in_progress',
        output: productionCheckOutput(d, 'deployed', null),
      });
      await updateComment(bot, gh, pr.number, config.comment, (s) => ({
        ...s,
        production: {
          deploymentId: d.id,
          how: 'deployed',
          by: 'the merge',
          sha: d.commitHash,
          branch: d.branch,
          status: d.status,
          url: null,
          error: null,
        },
      }));
      await reportDeployment(bot, gh, tag, await bot.slipway.deployments.get(d.id), config.comment);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      await note(`⚠️ Merged, but promoting ${shortSha(pr.head.sha)} to production failed: ${err.message}`);
    }
  });
}
