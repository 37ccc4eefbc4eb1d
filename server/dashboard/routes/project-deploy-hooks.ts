import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { CreateDeployHookBody } from '../../../api/schemas/deploy-hooks.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import { createDeployHook, deleteDeployHook, listDeployHooks } from '../../features/deployments/index.ts';
import type { Actor } from '../../platform/deps/deps.ts';
import { projectContext } from '../context.ts';
import { submit, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { deployHooksPage } from '../pages/deploy-hooks.ts';
import { doneMessage, params } from './project-tab.ts';

/** Deploy hooks: made (the URL shown once), listed and revoked. */
export function projectDeployHookRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  const deployHooks = async (
    view: View,
    actor: Actor,
    projectId: string,
    state: Parameters<typeof deployHooksPage>[2] = {},
  ) => {
    const ctx = await projectContext(deps, actor, projectId);
    const { items } = await listDeployHooks(deps, actor, ctx.project.id, { page: 1, limit: 100 });
    return deployHooksPage(view, { ...ctx, hooks: items, now: deps.clock.now() }, state);
  };
  scope.get(
    '/projects/:projectId/deploy-hooks',
    kit.page(async ({ req, view, session }) =>
      deployHooks(view, session.actor, params(req).projectId!, { message: doneMessage(req) }),
    ),
  );
  scope.post(
    '/projects/:projectId/deploy-hooks',
    kit.page(async (ctx) => {
      const { projectId } = params(ctx.req);
      const typed = { name: ctx.form.name ?? '', branch: ctx.form.branch ?? '' };
      try {
        const made = await createDeployHook(
          deps,
          ctx.session.actor,
          projectId!,
          parseOrThrow(CreateDeployHookBody, typed, 'body'),
        );
        // Not a redirect: this answer is the only place the URL with its secret is ever shown
        // (sent with Cache-Control: no-store, as every page is).
        return kit.send(ctx.reply, await deployHooks(ctx.view, ctx.session.actor, projectId!, { made }), 201);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return kit.send(
          ctx.reply,
          await deployHooks(ctx.view, ctx.session.actor, projectId!, { error: err.message, typed }),
          err.status,
        );
      }
    }),
  );
  scope.post(
    '/projects/:projectId/deploy-hooks/:hookId/delete',
    kit.page(async (ctx) => {
      const { projectId, hookId } = params(ctx.req);
      return submit(
        kit,
        ctx,
        () => deleteDeployHook(deps, ctx.session.actor, projectId!, hookId!),
        `/projects/${projectId}/deploy-hooks?done=revoked`,
        (error) => deployHooks(ctx.view, ctx.session.actor, projectId!, { error }),
      );
    }),
  );
}
