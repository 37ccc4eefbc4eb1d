import { ApiError } from '../../api/client/index.ts';
import type { Bot } from '../context.ts';
import { PREVIEW_CHECK } from '../github/checks.ts';
import { reply } from '../github/comments.ts';
import { loadRepoConfig } from '../github/load-config.ts';
import type { GitHubRepo } from '../github/octokit.ts';
import { type CheckRunEvent as CheckRunPayload, CheckRunEvent } from '../github/payloads.ts';
import { hasWriteAccess } from '../github/permission.ts';
import { getPull } from '../github/pulls.ts';
import { parseTag } from '../lib/tag.ts';
import { promoteFromPull } from '../preview/promote-head.ts';
import { requestPreview } from '../preview/request-preview.ts';
import { runPreview } from '../preview/run-preview.ts';
import { deniedReply } from '../render/replies.ts';
import type { GitHubEvent } from './event.ts';

/** The pull request a preview check belongs to: from its external id, else GitHub's list. */
async function pullOf(bot: Bot, run: CheckRunPayload['check_run']): Promise<number | null> {
  const external = run.external_id ?? '';
  const m = /^pr-(\d+)$/.exec(external);
  if (m) return Number(m[1]);
  if (external.startsWith('dpl_')) {
    try {
      const tag = bot.tags.get(external) ?? parseTag((await bot.slipway.deployments.get(external)).message);
      if (tag) return tag.pull;
    } catch (err) {
      // A deployment the bot can no longer read (its project was deleted): fall back to GitHub's list.
      if (!(err instanceof ApiError)) throw err;
    }
  }
  return run.pull_requests[0]?.number ?? null;
}

/**
 * `check_run`: the buttons of the preview check (Approve preview, Redeploy, Promote) and GitHub's
 * "Re-run", which decides again as for a new push. Only people with write access may use them.
 */
export async function onCheckRun(bot: Bot, event: GitHubEvent): Promise<void> {
  const e = CheckRunEvent.parse(event.payload);
  const run = e.check_run;
  const action =
    e.action === 'rerequested'
      ? 'rerun'
      : e.action === 'requested_action'
        ? e.requested_action?.identifier
        : null;
  if (run.name !== PREVIEW_CHECK || !action) return;
  const gh: GitHubRepo = bot.github.fromEvent(
    { owner: e.repository.owner.login, repo: e.repository.name },
    e.installation.id,
    event.octokit,
  );
  const pull = await pullOf(bot, run);
  if (pull === null) return;
  const login = e.sender.login;
  if (!(await hasWriteAccess(gh, login)))
    return reply(gh, pull, deniedReply(login, 'button', e.repository.full_name));
  const config = await loadRepoConfig(gh);
  const key = `github-${event.id}`;

  let answer: string | null = null;
  if (action === 'rerun') {
    await runPreview(bot, { gh, pr: await getPull(gh, pull), config, idempotencyKey: key });
  } else if (config.kind !== 'ok') {
    return;
  } else if (action === 'approve' || action === 'redeploy') {
    answer = await requestPreview(bot, gh, {
      pull,
      login,
      config: config.config,
      idempotencyKey: key,
      // An approval is for the commit the approver saw: a newer push needs its own.
      ...(action === 'approve' ? { expectSha: run.head_sha } : {}),
    });
  } else if (action === 'promote' && run.external_id?.startsWith('dpl_')) {
    answer = await promoteFromPull(bot, gh, {
      pull,
      login,
      config: config.config,
      deploymentId: run.external_id,
    });
  }
  if (answer) await reply(gh, pull, answer);
}
