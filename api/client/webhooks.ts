import type { z } from 'zod';
import { type CreateWebhookBody, Delivery, Webhook } from '../schemas/webhooks.ts';
import { type Caller, seg } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

const base = (projectId: string) => `/v1/projects/${seg(projectId)}/webhooks`;
const hook = (projectId: string, webhookId: string) => `${base(projectId)}/${seg(webhookId)}`;

/** Signed webhooks of a project and their deliveries. */
export function webhooksApi(c: Caller) {
  return {
    /** Registers a webhook (201); the secret is never returned. */
    create: (projectId: string, body: z.input<typeof CreateWebhookBody>, o?: CallOptions) =>
      c.data(Webhook, 'POST', base(projectId), { ...o, body }),
    list: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.list(Webhook, base(projectId), { ...o, query }),
    remove: (projectId: string, webhookId: string, o?: CallOptions) =>
      c.deleted(hook(projectId, webhookId), o),
    /** One page of deliveries with every attempt, newest first. */
    deliveries: (projectId: string, webhookId: string, query: PageInput = {}, o?: CallOptions) =>
      c.list(Delivery, `${hook(projectId, webhookId)}/deliveries`, { ...o, query }),
    /** Sends a delivery again: answers the new delivery. */
    redeliver: (projectId: string, webhookId: string, deliveryId: string, o?: CallOptions) =>
      c.data(Delivery, 'POST', `${hook(projectId, webhookId)}/deliveries/${seg(deliveryId)}/redeliver`, o),
  };
}
