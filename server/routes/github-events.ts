import { z } from 'zod';
import {
  ClaimedGitHubEvent,
  ClaimGitHubEventsBody,
  FinishGitHubEventBody,
  FinishedGitHubEvent,
  StoredGitHubEvent,
  StoreGitHubEventBody,
} from '../../api/schemas/github-events.ts';
import { route } from '../http/route.ts';
import { claimGitHubEvents } from '../services/github-events/claim-events.ts';
import { finishGitHubEvent } from '../services/github-events/finish-event.ts';
import { storeGitHubEvent } from '../services/github-events/store-event.ts';

const EventParams = z.object({ eventId: z.string() });

/** The GitHub App's durable queue of GitHub deliveries (docs/bot.md#durable-events): one per user. */
export const githubEventRoutes = [
  route({
    method: 'POST',
    url: '/v1/github/events',
    tag: 'github',
    summary: "Store a GitHub delivery to the App in the caller's queue (kept once per delivery id)",
    body: StoreGitHubEventBody,
    response: StoredGitHubEvent,
    successStatus: 202,
    // GitHub caps a delivery at 25 MB; its JSON string form here is a little larger.
    bodyLimit: 32 * 1024 * 1024,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await storeGitHubEvent(deps, actor, body),
    }),
  }),
  route({
    method: 'POST',
    url: '/v1/github/events/claim',
    tag: 'github',
    summary: "Claim the caller's due events: the oldest open one of each ordering key",
    body: ClaimGitHubEventsBody,
    response: z.array(ClaimedGitHubEvent),
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await claimGitHubEvents(deps, actor, body),
    }),
  }),
  route({
    method: 'POST',
    url: '/v1/github/events/:eventId/finish',
    tag: 'github',
    summary: 'End a claim: done, retry later (with backoff), or release untried',
    params: EventParams,
    body: FinishGitHubEventBody,
    response: FinishedGitHubEvent,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await finishGitHubEvent(deps, actor, params.eventId, body),
    }),
  }),
];
