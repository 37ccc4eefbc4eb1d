import type { ConfigResult } from '../config.ts';
import type { Bot } from '../context.ts';
import { ACTIONS } from '../github/checks.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { isFork, type PullRequest } from '../github/payloads.ts';
import { changedFiles, commitMessage } from '../github/pulls.ts';
import { pullKey } from '../lib/tag.ts';
import { approvalCheckOutput, configErrorCheckOutput, skippedCheckOutput } from '../render/check.ts';
import { type Decision, decidePreview } from './decide.ts';
import { openPreviewCheck, pullExternalId } from './open-check.ts';
import { startPreview, type StartResult } from './start-preview.ts';
import { updateComment } from './update-comment.ts';

/** A reason to (re)consider a pull request's preview. */
export interface PreviewRequest {
  gh: GitHubRepo;
  pr: PullRequest;
  config: ConfigResult;
  /** The previous head (`synchronize`): its open check is superseded. */
  before?: string;
  /**
   * Login of a person with write access who asked for this preview (`/preview`, a button): the
   * skip rules do not apply and a fork's head counts as approved.
   */
  requestedBy?: string;
  /** The same key for a redelivered event, so it starts one deployment. */
  idempotencyKey: string;
}

export type PreviewOutcome =
  | { kind: 'missing' }
  | { kind: 'invalid'; message: string }
  | Exclude<Decision, { kind: 'build' }>
  | StartResult;

/**
 * Decides what a pull request's head gets and does it: a skipped check with the reason, a check
 * waiting for approval (forks), or a preview. Every path ends with a check on the head commit,
 * so a required "Slipway Preview" check never hangs.
 */
export async function runPreview(bot: Bot, req: PreviewRequest): Promise<PreviewOutcome> {
  const { gh, pr, config } = req;
  if (config.kind === 'missing') return config;
  return bot.locks.run(pullKey({ ...gh, pull: pr.number }), async () => {
    const external = pullExternalId(pr.number);
    if (config.kind === 'invalid') {
      await openPreviewCheck(
        bot,
        gh,
        pr,
        { status: 'completed', conclusion: 'failure', output: configErrorCheckOutput(config.message) },
        external,
        req.before,
      );
      return config;
    }
    const settings = config.config;
    let decision: Decision;
    if (req.requestedBy) {
      decision =
        isFork(pr) && settings.previews.forks === 'never'
          ? {
              kind: 'skip',
              reason: 'Previews of pull requests from forks are turned off (`previews.forks: never`).',
            }
          : { kind: 'build' };
    } else {
      decision = await decidePreview(settings, pr, {
        changedFiles: () => changedFiles(gh, pr.number),
        headCommitMessage: () => commitMessage(gh, pr.head.sha),
      });
    }

    if (decision.kind === 'skip') {
      await openPreviewCheck(
        bot,
        gh,
        pr,
        { status: 'completed', conclusion: 'skipped', output: skippedCheckOutput(decision.reason) },
        external,
        req.before,
      );
      return decision;
    }
    if (decision.kind === 'approve') {
      const check = await openPreviewCheck(
        bot,
        gh,
        pr,
        {
          status: 'completed',
          conclusion: 'action_required',
          output: approvalCheckOutput(pr.head.sha),
          actions: [ACTIONS.approve],
          ...(pr.html_url ? { detailsUrl: pr.html_url } : {}),
        },
        external,
        req.before,
      );
      await updateComment(bot, gh, pr.number, settings.comment, (s) => ({
        ...s,
        closed: false,
        preview: {
          deploymentId: null,
          sha: pr.head.sha,
          status: 'awaiting-approval',
          url: null,
          logsUrl: check.url,
          error: null,
        },
      }));
      return decision;
    }
    return startPreview(bot, gh, pr, settings, { before: req.before, idempotencyKey: req.idempotencyKey });
  });
}
