import { z } from 'zod';
import {
  ClaimedGitHubEvent,
  type ClaimGitHubEventsBody,
  type FinishGitHubEventBody,
  FinishedGitHubEvent,
  StoredGitHubEvent,
  type StoreGitHubEventBody,
} from '../schemas/github-events.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import { seg } from './envelope.ts';

/** The GitHub App's durable queue of GitHub deliveries (the caller's own). */
export function githubEventsApi(c: Caller) {
  return {
    /** Stores a delivery (202); storing it again answers `duplicate: true`. */
    store: (body: z.input<typeof StoreGitHubEventBody>, o?: CallOptions) =>
      c.data(StoredGitHubEvent, 'POST', '/v1/github/events', { ...o, body }),
    /** Claims due events, the oldest open one of each ordering key. */
    claim: (body: z.input<typeof ClaimGitHubEventsBody> = {}, o?: CallOptions) =>
      c.data(z.array(ClaimedGitHubEvent), 'POST', '/v1/github/events/claim', { ...o, body }),
    /** Ends a claim: done, retry (with backoff) or release. */
    finish: (eventId: string, body: z.input<typeof FinishGitHubEventBody>, o?: CallOptions) =>
      c.data(FinishedGitHubEvent, 'POST', `/v1/github/events/${seg(eventId)}/finish`, { ...o, body }),
  };
}
