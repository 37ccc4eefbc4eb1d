import type { Selectable } from 'kysely';
import {
  type Delivery,
  type DeliveryAttempt,
  type Webhook,
  WebhookEvent,
  WebhookPayload,
} from '../../../api/schemas/webhooks.ts';
import type { WebhookAttemptsTable, WebhooksTable } from '../../platform/store/schema.ts';
import type { DeliveryRow } from './delivery-job.ts';
import { decodeJson } from '../../core/json-column.ts';
import { z } from 'zod';

/** `webhooks.events`: the events a webhook is subscribed to. */
export const WebhookEvents = z.array(WebhookEvent);

export type WebhookRow = Selectable<WebhooksTable>;
export type { DeliveryRow };
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** The wire shape of a webhook: never the secret. */
export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: decodeJson(WebhookEvents, row.events, `Webhook ${row.id}'s events`),
    active: row.active === 1,
    createdAt: row.created_at,
  };
}

export function toAttempt(row: AttemptRow): DeliveryAttempt {
  return {
    at: row.at,
    statusCode: row.status_code === null ? null : Number(row.status_code),
    durationMs: Number(row.duration_ms),
    error: row.error,
  };
}

export function toDelivery(row: DeliveryRow, attempts: AttemptRow[]): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event as WebhookEvent,
    status: row.status,
    attempts: attempts.map(toAttempt),
    nextAttemptAt: row.next_attempt_at,
    payload: decodeJson(WebhookPayload, row.payload, `Delivery ${row.id}'s payload`),
    createdAt: row.created_at,
  };
}
