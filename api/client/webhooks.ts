import type { z } from 'zod';
import { webhooks } from '../routes/webhooks.ts';
import type { CreateWebhookBody } from '../schemas/webhooks.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

/** Signed webhooks of a project and their deliveries. */
export function webhooksApi(c: Caller) {
  return {
    /** Registers a webhook (201); the secret is never returned. */
    create: (projectId: string, body: z.input<typeof CreateWebhookBody>, o?: CallOptions) =>
      c.call(webhooks.create, { projectId }, { ...o, body }),
    list: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.call(webhooks.list, { projectId }, { ...o, query }),
    remove: (projectId: string, webhookId: string, o?: CallOptions) =>
      c.call(webhooks.remove, { projectId, webhookId }, o),
    /** One page of deliveries with every attempt, newest first. */
    deliveries: (projectId: string, webhookId: string, query: PageInput = {}, o?: CallOptions) =>
      c.call(webhooks.deliveries, { projectId, webhookId }, { ...o, query }),
    /** Sends a delivery again: answers the new delivery. */
    redeliver: (projectId: string, webhookId: string, deliveryId: string, o?: CallOptions) =>
      c.call(webhooks.redeliver, { projectId, webhookId, deliveryId }, o),
  };
}
