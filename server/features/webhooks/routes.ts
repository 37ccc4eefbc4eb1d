import { webhooks } from '../../../api/routes/webhooks.ts';
import { route } from '../../platform/http/route-spec.ts';
import { pageMeta } from '../../platform/http/pagination.ts';
import { createWebhook } from './create-webhook.ts';
import { deleteWebhook } from './delete-webhook.ts';
import { listDeliveries } from './list-deliveries.ts';
import { listWebhooks } from './list-webhooks.ts';
import { redeliver } from './redeliver.ts';

export const webhookRoutes = [
  route({
    ...webhooks.create,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createWebhook(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...webhooks.list,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listWebhooks(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...webhooks.remove,
    handler: async ({ deps, actor, params }) => {
      await deleteWebhook(deps, actor, params.projectId, params.webhookId);
      return { kind: 'deleted', message: `Webhook ${params.webhookId} deleted` };
    },
  }),
  route({
    ...webhooks.deliveries,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDeliveries(deps, actor, params.projectId, params.webhookId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...webhooks.redeliver,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await redeliver(deps, actor, params.projectId, params.webhookId, params.deliveryId),
    }),
  }),
];
