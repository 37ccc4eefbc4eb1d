import { z } from 'zod';
import {
  ClaimedGitHubEvent,
  ClaimGitHubEventsBody,
  FinishGitHubEventBody,
  FinishedGitHubEvent,
  StoredGitHubEvent,
  StoreGitHubEventBody,
} from '../schemas/github-events.ts';
import { contract } from './contract.ts';

const EventParams = z.object({ eventId: z.string() });

/**
 * The GitHub App's durable queue of GitHub deliveries (docs/bot.md#durable-events): one per user,
 * open only to the App's own token (`githubApp`), refused to any other before its body is read.
 */
export const githubEvents = {
  store: contract({
    method: 'POST',
    url: '/v1/github/events',
    tag: 'github',
    summary: "Store a GitHub delivery to the App in the caller's queue (kept once per delivery id)",
    body: StoreGitHubEventBody,
    response: StoredGitHubEvent,
    successStatus: 202,
  }),
  claim: contract({
    method: 'POST',
    url: '/v1/github/events/claim',
    tag: 'github',
    summary: "Claim the caller's due events: the oldest open one of each ordering key",
    body: ClaimGitHubEventsBody,
    response: z.array(ClaimedGitHubEvent),
  }),
  finish: contract({
    method: 'POST',
    url: '/v1/github/events/:eventId/finish',
    tag: 'github',
    summary: 'End a claim: done, retry later (with backoff), or release untried',
    params: EventParams,
    body: FinishGitHubEventBody,
    response: FinishedGitHubEvent,
  }),
};
