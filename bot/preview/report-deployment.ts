import type { Deployment } from '../../api/schemas/deployments.ts';
import type { CommentMode } from '../config.ts';
import type { Bot } from '../context.ts';
import {
  ACTIONS,
  type CheckRun,
  type CheckState,
  checkUrl,
  listChecks,
  PREVIEW_CHECK,
  PRODUCTION_CHECK,
  updateCheck,
} from '../github/checks.ts';
import { listPreviewDeployments, setDeploymentStatus } from '../github/deployments.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import type { DeploymentTag } from '../lib/tag.ts';
import { previewCheckOutput, productionCheckOutput } from '../render/check.ts';
import { readLogTail } from '../service/log-tail.ts';
import { updateComment } from './update-comment.ts';
import { accessOf } from '../render/access.ts';

const isFinal = (d: Deployment) => d.status === 'live' || d.status === 'failed';

/** Writes the check unless it already shows this stage (replays and duplicate events change nothing). */
async function moveCheck(bot: Pick<Bot, 'now'>, gh: GitHubRepo, run: CheckRun, state: CheckState) {
  if (state.status !== 'completed' && run.output?.title === state.output.title) return;
  await updateCheck(gh, run.id, state, bot.now());
}

/**
 * Shows a deployment's current state on GitHub: its check, its GitHub Deployment and the pull
 * request's comment. `d` must be freshly read from the service. A check that is already
 * completed is never touched again, and states only move forward, so an event that arrives late
 * or twice cannot move anything backwards.
 */
export async function reportDeployment(
  bot: Pick<Bot, 'now' | 'slipway'>,
  gh: GitHubRepo,
  tag: DeploymentTag,
  d: Deployment,
  mode: CommentMode,
): Promise<void> {
  const name = tag.kind === 'preview' ? PREVIEW_CHECK : PRODUCTION_CHECK;
  const run = (await listChecks(gh, tag.sha, name)).find((r) => r.external_id === d.id);
  // No open check: superseded, closed, already final, or not set up yet (setting up reports at its end).
  if (!run || run.status === 'completed') return;
  const logTail = d.status === 'failed' ? await readLogTail(bot.slipway, d.id) : undefined;
  const final = isFinal(d);
  const conclusion = d.status === 'live' ? 'success' : 'failure';

  if (tag.kind === 'preview') {
    await moveCheck(bot, gh, run, {
      status: final ? 'completed' : 'in_progress',
      ...(final ? { conclusion } : {}),
      output: previewCheckOutput(d, logTail),
      // The deployment's page in the dashboard (its log, live); the preview itself once live otherwise.
      ...(d.dashboardUrl ? { detailsUrl: d.dashboardUrl } : d.status === 'live' ? { detailsUrl: d.url } : {}),
      actions: d.status === 'live' ? [ACTIONS.redeploy, ACTIONS.promote] : final ? [ACTIONS.redeploy] : [],
    });
    if (final) {
      const logUrl = checkUrl(gh, run);
      const found = (await listPreviewDeployments(gh, tag.pull, tag.sha)).find(
        (x) => x.slipwayDeploymentId === d.id,
      );
      if (found) {
        await setDeploymentStatus(
          gh,
          found.id,
          d.status === 'live'
            ? { state: 'success', environmentUrl: d.url, logUrl, description: 'The preview is live' }
            : {
                state: 'failure',
                logUrl,
                description: `The preview failed: ${d.errorMessage ?? 'see the log'}`,
              },
        );
      }
    }
    // The check is open, so this is the pull request's current preview: a comment that does not
    // exist yet (`comment: failures`) starts with it.
    await updateComment(bot, gh, tag.pull, mode, (s) =>
      s.preview === null || s.preview.deploymentId === d.id
        ? {
            ...s,
            preview: {
              deploymentId: d.id,
              sha: tag.sha,
              status: d.status,
              url: d.url,
              branchUrl: d.branchUrl ?? null,
              logsUrl: checkUrl(gh, run),
              dashboardUrl: d.dashboardUrl ?? null,
              error: d.errorMessage,
              ...accessOf(d),
            },
          }
        : null,
    );
    return;
  }

  const productionUrl =
    d.status === 'live' ? (await bot.slipway.projects.get(d.projectId)).deploymentUrl : null;
  await moveCheck(bot, gh, run, {
    status: final ? 'completed' : 'in_progress',
    ...(final ? { conclusion } : {}),
    output: productionCheckOutput(d, 'deployed', productionUrl, logTail),
    ...(d.dashboardUrl ? { detailsUrl: d.dashboardUrl } : productionUrl ? { detailsUrl: productionUrl } : {}),
  });
  await updateComment(bot, gh, tag.pull, mode, (s) =>
    s.production === null || s.production.deploymentId === d.id
      ? {
          ...s,
          production: {
            deploymentId: d.id,
            how: 'deployed',
            by: s.production?.by ?? 'the merge',
            branch: d.branch,
            status: d.status,
            sha: d.commitHash,
            url: productionUrl,
            error: d.errorMessage,
          },
        }
      : null,
  );
}
