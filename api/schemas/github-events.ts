import { z } from 'zod';
import { Timestamp, wholeNumber } from './common.ts';

/**
 * GitHub caps a webhook delivery at 25 MB; the queue takes a body of at most this many bytes
 * (UTF-8) and answers 413 beyond it.
 */
export const GITHUB_DELIVERY_MAX_BYTES = 25 * 1024 * 1024;

/**
 * GitHub's webhook deliveries to the GitHub App, kept by the service so the App can answer GitHub
 * at once and do the work afterwards, durably (docs/bot.md#durable-events). Only the App's own
 * token may use the queue, and each such caller has its own: events are only ever listed, claimed
 * or finished by the user that stored them.
 */
export const StoreGitHubEventBody = z.strictObject({
  /** GitHub's `X-GitHub-Delivery`: an event stored twice is kept once. */
  deliveryId: z.string().min(1, 'is required').max(100, 'must be at most 100 characters'),
  /** GitHub's `X-GitHub-Event`, e.g. `pull_request`. */
  name: z.string().regex(/^[a-z_]{1,64}$/, 'must be a GitHub event name such as pull_request'),
  /**
   * The delivery's body exactly as received (its signature covers these bytes): at most
   * {@link GITHUB_DELIVERY_MAX_BYTES} of UTF-8, else 413. An event of the same name and body
   * stored before (a replay under another delivery id) is kept once, like a repeated delivery id.
   */
  body: z.string().min(2, 'must be the raw JSON body'),
  /** GitHub's `X-Hub-Signature-256`, checked again before the event is processed. */
  signature: z.string().regex(/^sha256=[0-9a-f]{64}$/, 'must be sha256=<64 hex digits>'),
  /** Events of one key are processed one at a time, in the order received (e.g. `<repo id>#<pull number>`). */
  orderingKey: z.string().min(1).max(200, 'must be at most 200 characters'),
});
export type StoreGitHubEventBody = z.infer<typeof StoreGitHubEventBody>;

export const GitHubEventStatus = z.enum(['pending', 'running', 'done', 'failed']);

export const StoredGitHubEvent = z.object({
  /** `ghe_` identifier. */
  id: z.string(),
  deliveryId: z.string(),
  /** `pending` (waiting or to retry), `running` (claimed), `done`, or `failed` (gave up). */
  status: GitHubEventStatus,
  /** True when this delivery (its id, or its event name and body) was stored before: nothing new was stored. */
  duplicate: z.boolean(),
  receivedAt: Timestamp,
});
export type StoredGitHubEvent = z.infer<typeof StoredGitHubEvent>;

export const ClaimGitHubEventsBody = z.strictObject({
  /** How many events to claim at most (of different ordering keys). */
  limit: wholeNumber('limit', 1, 50, 5),
  /** How long the claim holds, in milliseconds; past it another worker may take the event. */
  leaseMs: z
    .number()
    .int()
    .min(1000, 'must be at least 1000')
    .max(3_600_000, 'must be at most 3600000')
    .default(60_000),
});

export const ClaimedGitHubEvent = z.object({
  id: z.string(),
  deliveryId: z.string(),
  name: z.string(),
  body: z.string(),
  signature: z.string(),
  /** Tries before this one. */
  attempts: z.number().int(),
  /** The claim's token: `done`, `fail` and `release` must send it back. */
  lease: z.string(),
});
export type ClaimedGitHubEvent = z.infer<typeof ClaimedGitHubEvent>;

export const FinishGitHubEventBody = z.strictObject({
  /** The claim's token. */
  lease: z.string().min(1, 'is required'),
  /** `done`; `retry` (after `retryInMs`, or given up after the last try); `release` (hand back untried). */
  outcome: z.enum(['done', 'retry', 'release']),
  /** Why it failed, for the record. */
  error: z.string().max(2000).optional(),
});

export const FinishedGitHubEvent = z.object({
  /** `done`, `pending` (to retry at `nextAttemptAt`, or handed back) or `failed` (given up). */
  status: z.enum(['pending', 'done', 'failed']),
  /** Tries so far. */
  attempts: z.number().int(),
  /** When it is due again, if it is. */
  nextAttemptAt: Timestamp.nullable(),
});
