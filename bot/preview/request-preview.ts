import type { SlipwayConfig } from '../config.ts';
import type { Bot } from '../context.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { getPull } from '../github/pulls.ts';
import {
  invalidConfigReply,
  previewRefusedReply,
  staleApprovalReply,
  startFailedReply,
} from '../render/replies.ts';
import { runPreview } from './run-preview.ts';

/**
 * `/preview` and the Redeploy and Approve buttons: a preview of the pull request's current head,
 * asked for by `login` (who has write access). With `expectSha` (an approval of a commit) nothing
 * is built when the head has moved on since. Returns a reply when the preview did not start.
 */
export async function requestPreview(
  bot: Bot,
  gh: GitHubRepo,
  input: { pull: number; login: string; config: SlipwayConfig; idempotencyKey: string; expectSha?: string },
): Promise<string | null> {
  const pr = await getPull(gh, input.pull);
  if (pr.state !== 'open') return previewRefusedReply('the pull request is closed.');
  if (input.expectSha && pr.head.sha !== input.expectSha)
    return staleApprovalReply(input.login, input.expectSha);
  const outcome = await runPreview(bot, {
    gh,
    pr,
    config: { kind: 'ok', config: input.config },
    requestedBy: input.login,
    idempotencyKey: input.idempotencyKey,
  });
  switch (outcome.kind) {
    case 'skip':
      return previewRefusedReply(outcome.reason);
    case 'error':
      return startFailedReply(outcome.message);
    case 'invalid':
      return invalidConfigReply(outcome.message);
    default:
      return null;
  }
}
