import { z } from 'zod';
import { PageQuery } from '../../api/schemas/common.ts';
import { CreateWebhookBody, Delivery, ListDeliveriesQuery, Webhook } from '../../api/schemas/webhooks.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createWebhook } from '../services/webhooks/create-webhook.ts';
import { deleteWebhook } from '../services/webhooks/delete-webhook.ts';
import { listDeliveries } from '../services/webhooks/list-deliveries.ts';
import { listWebhooks } from '../services/webhooks/list-webhooks.ts';
import { redeliver } from '../services/webhooks/redeliver.ts';

const ProjectParams = z.object({ projectId: z.string() });
const WebhookParams = ProjectParams.extend({ webhookId: z.string() });
const DeliveryParams = WebhookParams.extend({ deliveryId: z.string() });

export const webhookRoutes = [
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/webhooks',
    tag: 'webhooks',
    summary: 'Register a webhook (the secret is never returned)',
    params: ProjectParams,
    body: CreateWebhookBody,
    response: Webhook,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createWebhook(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/webhooks',
    tag: 'webhooks',
    summary: 'List webhooks, newest first',
    params: ProjectParams,
    query: PageQuery,
    response: Webhook,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listWebhooks(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/webhooks/:webhookId',
    tag: 'webhooks',
    summary: 'Delete a webhook with its deliveries',
    params: WebhookParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await deleteWebhook(deps, actor, params.projectId, params.webhookId);
      return { kind: 'deleted', message: `Webhook ${params.webhookId} deleted` };
    },
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/webhooks/:webhookId/deliveries',
    tag: 'webhooks',
    summary: 'List deliveries of a webhook, newest first, with their attempts',
    params: WebhookParams,
    query: ListDeliveriesQuery,
    response: Delivery,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDeliveries(deps, actor, params.projectId, params.webhookId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    tag: 'webhooks',
    summary: 'Send a delivery again, as a new delivery with a fresh timestamp',
    params: DeliveryParams,
    response: Delivery,
    successStatus: 201,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await redeliver(deps, actor, params.projectId, params.webhookId, params.deliveryId),
    }),
  }),
];
