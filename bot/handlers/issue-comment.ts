import type { Bot } from '../context.ts';
import { reply } from '../github/comments.ts';
import { loadRepoConfig } from '../github/load-config.ts';
import { IssueCommentEvent } from '../github/payloads.ts';
import { hasWriteAccess } from '../github/permission.ts';
import { commandArgument, parseCommand } from '../lib/parse-command.ts';
import { promoteFromPull } from '../preview/promote-head.ts';
import { requestPreview } from '../preview/request-preview.ts';
import { rollbackProduction } from '../preview/rollback.ts';
import { deniedReply, helpReply, invalidConfigReply, noConfigReply } from '../render/replies.ts';
import type { GitHubEvent } from './event.ts';

/**
 * `issue_comment.created`: the commands `/preview`, `/promote`, `/rollback` (write access) and
 * `/slipway help` (anyone, even without a `.github/slipway.yml`).
 */
export async function onIssueComment(bot: Bot, event: GitHubEvent): Promise<void> {
  const e = IssueCommentEvent.parse(event.payload);
  // Bots never command the bot: this also keeps it from answering its own comments.
  if (e.action !== 'created' || e.comment.user.type === 'Bot') return;
  const command = parseCommand(e.comment.body);
  if (!command) return;
  const gh = bot.github.fromEvent(
    { owner: e.repository.owner.login, repo: e.repository.name },
    e.installation.id,
    event.octokit,
  );
  const pull = e.issue.number;
  const login = e.comment.user.login;
  if (command === 'help') return reply(gh, pull, helpReply());
  if (!e.issue.pull_request) return;
  if (!(await hasWriteAccess(gh, login)))
    return reply(gh, pull, deniedReply(login, command, e.repository.full_name));

  const config = await loadRepoConfig(gh);
  if (config.kind === 'missing') return reply(gh, pull, noConfigReply());
  if (config.kind === 'invalid') return reply(gh, pull, invalidConfigReply(config.message));
  const input = { pull, login, config: config.config };
  let answer: string | null;
  switch (command) {
    case 'preview':
      answer = await requestPreview(bot, gh, { ...input, idempotencyKey: `github-comment-${e.comment.id}` });
      break;
    case 'promote':
      answer = await promoteFromPull(bot, gh, input);
      break;
    case 'rollback':
      answer = await rollbackProduction(bot, gh, { ...input, to: commandArgument(e.comment.body) });
      break;
  }
  if (answer) await reply(gh, pull, answer);
}
