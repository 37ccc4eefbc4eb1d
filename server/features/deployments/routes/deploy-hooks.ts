import { deployHooks } from '../../../../api/routes/deploy-hooks.ts';
import { ApiError } from '../../../../api/errors.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { createDeployHook } from '../deploy-hooks/create-deploy-hook.ts';
import { deleteDeployHook } from '../deploy-hooks/delete-deploy-hook.ts';
import { listDeployHooks } from '../deploy-hooks/list-deploy-hooks.ts';
import { triggerDeployHook } from '../deploy-hooks/trigger-deploy-hook.ts';

/** Deploy hooks: secret URLs that queue a build of a branch's head (docs/api/deploy-hooks.md). */
export const deployHookRoutes = [
  route({
    ...deployHooks.create,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createDeployHook(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...deployHooks.list,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDeployHooks(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...deployHooks.remove,
    handler: async ({ deps, actor, params }) => {
      await deleteDeployHook(deps, actor, params.projectId, params.hookId);
      return { kind: 'deleted', message: `Deploy hook ${params.hookId} revoked` };
    },
  }),
  route({
    ...deployHooks.trigger,
    bodyTooLarge: 'A deploy hook reads at most 64 KiB of a request body (and ignores it); send less, or none',
    handler: async ({ deps, params, reply }) => {
      const result = await triggerDeployHook(deps, params.key);
      void reply.header('X-RateLimit-Limit', result.window.limit);
      void reply.header('X-RateLimit-Remaining', result.window.remaining);
      void reply.header('X-RateLimit-Reset', result.window.reset);
      if ('refused' in result) {
        const { limit, retryAfter } = result.refused;
        void reply.header('Retry-After', retryAfter);
        throw new ApiError(
          'RATE_LIMIT_EXCEEDED',
          `This deploy hook takes ${limit} requests per hour and has had them all; retry in ${retryAfter} seconds`,
        );
      }
      return { kind: 'data', data: result.answer, status: result.answer.created ? 201 : 200 };
    },
  }),
];
