import type { FastifyInstance } from 'fastify';
import { CreateWebhookBody } from '../../../api/schemas/webhooks.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import type { Actor } from '../../platform/deps/deps.ts';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
} from '../../features/webhooks/index.ts';
import { projectContext } from '../context.ts';
import { submit, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { webhooksPage } from '../pages/webhooks.ts';
import { doneMessage, params } from './project-tab.ts';

/** Webhooks: added and removed, with their latest deliveries, each of which can be sent again. */
export function projectWebhookRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  const webhooks = async (
    view: View,
    actor: Actor,
    projectId: string,
    state: Parameters<typeof webhooksPage>[2] = {},
  ) => {
    const ctx = await projectContext(deps, actor, projectId);
    const { items } = await listWebhooks(deps, actor, ctx.project.id, { page: 1, limit: 100 });
    const withDeliveries = await Promise.all(
      items.map(async (webhook) => ({
        webhook,
        deliveries: (await listDeliveries(deps, actor, ctx.project.id, webhook.id, { page: 1, limit: 10 }))
          .items,
      })),
    );
    return webhooksPage(view, { ...ctx, webhooks: withDeliveries, now: deps.clock.now() }, state);
  };
  scope.get(
    '/projects/:projectId/webhooks',
    kit.page(async ({ req, view, session }) =>
      webhooks(view, session.actor, params(req).projectId!, { message: doneMessage(req) }),
    ),
  );
  scope.post(
    '/projects/:projectId/webhooks',
    kit.page(async (ctx) => {
      const { projectId } = params(ctx.req);
      // A form sends one `events` field per ticked box.
      const events = ctx.fields.getAll('events');
      return submit(
        kit,
        ctx,
        () =>
          createWebhook(
            deps,
            ctx.session.actor,
            projectId!,
            parseOrThrow(CreateWebhookBody, { url: ctx.form.url, secret: ctx.form.secret, events }, 'body'),
          ),
        `/projects/${projectId}/webhooks?done=added`,
        (error) =>
          webhooks(ctx.view, ctx.session.actor, projectId!, {
            error,
            typed: { url: ctx.form.url ?? '', events },
          }),
      );
    }),
  );
  scope.post(
    '/projects/:projectId/webhooks/:webhookId/delete',
    kit.page(async (ctx) => {
      const { projectId, webhookId } = params(ctx.req);
      return submit(
        kit,
        ctx,
        () => deleteWebhook(deps, ctx.session.actor, projectId!, webhookId!),
        `/projects/${projectId}/webhooks?done=removed`,
        (error) => webhooks(ctx.view, ctx.session.actor, projectId!, { error }),
      );
    }),
  );
  scope.post(
    '/projects/:projectId/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    kit.page(async (ctx) => {
      const { projectId, webhookId, deliveryId } = params(ctx.req);
      return submit(
        kit,
        ctx,
        () => redeliver(deps, ctx.session.actor, projectId!, webhookId!, deliveryId!),
        `/projects/${projectId}/webhooks?done=redelivered`,
        (error) => webhooks(ctx.view, ctx.session.actor, projectId!, { error }),
      );
    }),
  );
}
