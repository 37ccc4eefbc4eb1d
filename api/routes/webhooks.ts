import { z } from 'zod';
import { PageQuery } from '../schemas/common.ts';
import { CreateWebhookBody, Delivery, ListDeliveriesQuery, Webhook } from '../schemas/webhooks.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const WebhookParams = ProjectParams.extend({ webhookId: z.string() });
const DeliveryParams = WebhookParams.extend({ deliveryId: z.string() });

export const webhooks = {
  create: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/webhooks',
    tag: 'webhooks',
    summary: 'Register a webhook (the secret is never returned)',
    params: ProjectParams,
    body: CreateWebhookBody,
    response: Webhook,
    successStatus: 201,
  }),
  list: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/webhooks',
    tag: 'webhooks',
    summary: 'List webhooks, newest first',
    params: ProjectParams,
    query: PageQuery,
    response: Webhook,
    responseKind: 'list',
  }),
  remove: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/webhooks/:webhookId',
    tag: 'webhooks',
    summary: 'Delete a webhook with its deliveries',
    params: WebhookParams,
    responseKind: 'deleted',
  }),
  deliveries: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/webhooks/:webhookId/deliveries',
    tag: 'webhooks',
    summary: 'List deliveries of a webhook, newest first, with their attempts',
    params: WebhookParams,
    query: ListDeliveriesQuery,
    response: Delivery,
    responseKind: 'list',
  }),
  redeliver: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    tag: 'webhooks',
    summary: 'Send a delivery again, as a new delivery with a fresh timestamp',
    params: DeliveryParams,
    response: Delivery,
    successStatus: 201,
  }),
};
