import type { z } from 'zod';
import { githubEvents } from '../routes/github-events.ts';
import type {
  ClaimGitHubEventsBody,
  FinishGitHubEventBody,
  StoreGitHubEventBody,
} from '../schemas/github-events.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';

/** The GitHub App's durable queue of GitHub deliveries (the caller's own). */
export function githubEventsApi(c: Caller) {
  return {
    /** Stores a delivery (202); storing it again answers `duplicate: true`. */
    store: (body: z.input<typeof StoreGitHubEventBody>, o?: CallOptions) =>
      c.call(githubEvents.store, {}, { ...o, body }),
    /** Claims due events, the oldest open one of each ordering key. */
    claim: (body: z.input<typeof ClaimGitHubEventsBody> = {}, o?: CallOptions) =>
      c.call(githubEvents.claim, {}, { ...o, body }),
    /** Ends a claim: done, retry (with backoff) or release. */
    finish: (eventId: string, body: z.input<typeof FinishGitHubEventBody>, o?: CallOptions) =>
      c.call(githubEvents.finish, { eventId }, { ...o, body }),
  };
}
