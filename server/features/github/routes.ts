import { githubEvents } from '../../../api/routes/github-events.ts';
import { GITHUB_DELIVERY_MAX_BYTES } from '../../../api/schemas/github-events.ts';
import { route } from '../../platform/http/route-spec.ts';
import { claimGitHubEvents } from './events/claim-events.ts';
import { finishGitHubEvent } from './events/finish-event.ts';
import { storeGitHubEvent, TOO_LARGE_MESSAGE } from './events/store-event.ts';

/**
 * The GitHub App's durable queue of GitHub deliveries (docs/bot.md#durable-events): one per user,
 * open only to the App's own token (`githubApp`), refused to any other before its body is read.
 */
export const githubEventRoutes = [
  route({
    ...githubEvents.store,
    githubApp: true,
    // The delivery travels as a JSON string: escaping at most doubles valid JSON text (each `"`,
    // `\\` or whitespace becomes two characters). The exact 25 MiB bound is the service's (413).
    bodyLimit: 2 * GITHUB_DELIVERY_MAX_BYTES + 1024 * 1024,
    bodyTooLarge: TOO_LARGE_MESSAGE,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await storeGitHubEvent(deps, actor, body),
    }),
  }),
  route({
    ...githubEvents.claim,
    githubApp: true,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await claimGitHubEvents(deps, actor, body),
    }),
  }),
  route({
    ...githubEvents.finish,
    githubApp: true,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await finishGitHubEvent(deps, actor, params.eventId, body),
    }),
  }),
];
