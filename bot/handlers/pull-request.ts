import type { Bot } from '../context.ts';
import { loadRepoConfig } from '../github/load-config.ts';
import { PullRequestEvent } from '../github/payloads.ts';
import { deactivatePreviews, handleClose } from '../preview/close.ts';
import { pullKey } from '../lib/tag.ts';
import { handleMerge } from '../preview/merge.ts';
import { runPreview } from '../preview/run-preview.ts';
import type { GitHubEvent } from './event.ts';

/** The `pull_request` actions that (re)consider a preview. */
export const PREVIEW_ACTIONS = ['opened', 'synchronize', 'reopened', 'ready_for_review'] as const;

/** `pull_request`: a new head gets a preview; closing tears it down or, on merge, promotes it. */
export async function onPullRequest(bot: Bot, event: GitHubEvent): Promise<void> {
  const e = PullRequestEvent.parse(event.payload);
  const gh = bot.github.fromEvent(
    { owner: e.repository.owner.login, repo: e.repository.name },
    e.installation.id,
    event.octokit,
  );
  const idempotencyKey = `github-${event.id}`;
  if (e.action === 'closed') {
    const config = await loadRepoConfig(gh);
    if (config.kind !== 'ok') return;
    if (e.pull_request.merged) {
      await handleMerge(bot, gh, e.pull_request, config.config, idempotencyKey);
      // After the promotion: the reviewed preview now serves production, its environment is history.
      await bot.locks.run(pullKey({ ...gh, pull: e.pull_request.number }), () =>
        deactivatePreviews(gh, e.pull_request.number, 'The pull request was merged'),
      );
    } else await handleClose(bot, gh, e.pull_request, config.config);
    return;
  }
  if (!(PREVIEW_ACTIONS as readonly string[]).includes(e.action)) return;
  await runPreview(bot, {
    gh,
    pr: e.pull_request,
    config: await loadRepoConfig(gh),
    ...(e.action === 'synchronize' && e.before ? { before: e.before } : {}),
    idempotencyKey,
  });
}
