import type { ApplicationFunction } from 'probot';
import type { Bot } from './context.ts';
import type { GitHubEvent } from './handlers/event.ts';
import { onCheckRun } from './handlers/check-run.ts';
import { onIssueComment } from './handlers/issue-comment.ts';
import { onPullRequest } from './handlers/pull-request.ts';
import { serviceWebhookHandler } from './handlers/service-webhook.ts';
import { createGitHubAccess } from './github/installations.ts';
import type { BotServices } from './services.ts';

/** The GitHub events the App handles; app.yml subscribes to exactly these. */
export const HANDLED_EVENTS = ['pull_request', 'issue_comment', 'check_run'] as const;

/**
 * The Slipway GitHub App with its services: GitHub event handlers, and the receiver of the
 * service's webhooks mounted on Probot's HTTP server.
 */
export function createSlipwayApp(services: BotServices): ApplicationFunction {
  return (app, options) => {
    const bot: Bot = { ...services, github: createGitHubAccess(app) };
    const handle =
      (handler: (bot: Bot, event: GitHubEvent) => Promise<void>) =>
      (context: GitHubEvent): Promise<void> =>
        handler(bot, { id: context.id, payload: context.payload, octokit: context.octokit });
    app.on(
      [
        'pull_request.opened',
        'pull_request.synchronize',
        'pull_request.reopened',
        'pull_request.ready_for_review',
        'pull_request.closed',
      ],
      handle(onPullRequest),
    );
    app.on('issue_comment.created', handle(onIssueComment));
    app.on(['check_run.requested_action', 'check_run.rerequested'], handle(onCheckRun));
    try {
      options.addHandler(serviceWebhookHandler(bot));
    } catch (err) {
      // Loaded without an HTTP server (Probot's `receive` in a script): events still work.
      app.log.warn({ err }, 'the service webhook receiver is not mounted: no HTTP server');
    }
  };
}
