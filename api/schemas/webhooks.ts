import { z } from 'zod';
import { id, PageQuery, Timestamp } from './common.ts';

/**
 * The seed's seven event kinds plus the extension `deployment.promoted` (a preview became
 * production without a rebuild); a webhook subscribes to some of them.
 */
export const WEBHOOK_EVENTS = [
  'deployment.created',
  'deployment.building',
  'deployment.deploying',
  'deployment.success',
  'deployment.failed',
  'deployment.promoted',
  'domain.verified',
  'domain.ssl.issued',
] as const;
export const WebhookEvent = z.enum(WEBHOOK_EVENTS);
export type WebhookEvent = z.infer<typeof WebhookEvent>;

export const Webhook = z.object({
  /** `whk_` identifier. */
  id: id('whk'),
  /** Where deliveries are POSTed. */
  url: z.string(),
  /** Events this webhook receives. */
  events: z.array(WebhookEvent),
  /** False once the receiver answered 410 Gone: no more deliveries. */
  active: z.boolean(),
  /** When it was registered. */
  createdAt: Timestamp,
});
export type Webhook = z.infer<typeof Webhook>;

export const CreateWebhookBody = z.strictObject({
  /** An http or https URL that receives `POST` deliveries. */
  url: z
    .string()
    .max(2048, 'must be at most 2048 characters')
    .refine((u) => {
      try {
        return ['http:', 'https:'].includes(new URL(u).protocol);
      } catch {
        return false;
      }
    }, 'must be an http or https URL'),
  /** A non-empty list of event kinds; duplicates are ignored. */
  events: z.array(WebhookEvent).min(1, 'must list at least one event'),
  /** Key of the HMAC-SHA256 signature, 16 to 256 characters; never returned. */
  secret: z.string().min(16, 'must be at least 16 characters').max(256, 'must be at most 256 characters'),
});
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const ListDeliveriesQuery = PageQuery;
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

export const DeliveryAttempt = z.object({
  /** When the attempt started. */
  at: Timestamp,
  /** The receiver's HTTP status; null when it gave none (timeout, refused, unreachable). */
  statusCode: z.number().int().nullable(),
  /** How long the attempt took in milliseconds. */
  durationMs: z.number(),
  /** Why the attempt failed without a status, or null. */
  error: z.string().nullable(),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

/** The body of a webhook delivery. */
export const WebhookPayload = z.object({
  /** The event kind. */
  event: WebhookEvent,
  /** When the event happened; receivers reject one more than 5 minutes away. */
  timestamp: Timestamp,
  /** The event's details (deployment or domain fields). */
  data: z.record(z.string(), z.unknown()),
});
export type WebhookPayload = z.infer<typeof WebhookPayload>;

export const DeliveryStatus = z.enum(['pending', 'success', 'failed']);

export const Delivery = z.object({
  /** `whd_` identifier, sent as `X-Slipway-Delivery` on every attempt. */
  id: id('whd'),
  /** The webhook it goes to. */
  webhookId: id('whk'),
  /** The event kind. */
  event: WebhookEvent,
  /** `pending` (waiting or retrying), `success` or `failed` (retries exhausted). */
  status: DeliveryStatus,
  /** Every attempt so far, oldest first. */
  attempts: z.array(DeliveryAttempt),
  /** When the next attempt is due; null once it succeeded or failed. */
  nextAttemptAt: Timestamp.nullable(),
  /** The exact body that is sent (extension). */
  payload: WebhookPayload,
  /** When the delivery was recorded. */
  createdAt: Timestamp,
});
export type Delivery = z.infer<typeof Delivery>;
