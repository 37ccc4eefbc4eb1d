import { z } from 'zod';
import { ApiError } from '../../api/errors.ts';
import { PageQuery } from '../../api/schemas/common.ts';
import {
  CreateDeployHookBody,
  CreatedDeployHook,
  DeployHook,
  DeployHookTriggered,
} from '../../api/schemas/deploy-hooks.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createDeployHook } from '../services/deploy-hooks/create-deploy-hook.ts';
import { deleteDeployHook } from '../services/deploy-hooks/delete-deploy-hook.ts';
import { listDeployHooks } from '../services/deploy-hooks/list-deploy-hooks.ts';
import { triggerDeployHook } from '../services/deploy-hooks/trigger-deploy-hook.ts';

const ProjectParams = z.object({ projectId: z.string() });
const HookParams = ProjectParams.extend({ hookId: z.string() });
/** `<hook id>.<secret>`: the hook's URL is the credential (docs/api/deploy-hooks.md). */
const TriggerParams = z.object({ key: z.string() });

/** Deploy hooks: secret URLs that queue a build of a branch's head (docs/api/deploy-hooks.md). */
export const deployHookRoutes = [
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/deploy-hooks',
    tag: 'deployments',
    summary: 'Make a deploy hook for a branch (admins); its URL, with the secret, is shown this once',
    params: ProjectParams,
    body: CreateDeployHookBody,
    response: CreatedDeployHook,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createDeployHook(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/deploy-hooks',
    tag: 'deployments',
    summary: "List the project's deploy hooks, newest first, without their secrets",
    params: ProjectParams,
    query: PageQuery,
    response: DeployHook,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDeployHooks(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/deploy-hooks/:hookId',
    tag: 'deployments',
    summary: 'Revoke a deploy hook (admins): its URL answers 404 from now on',
    params: HookParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await deleteDeployHook(deps, actor, params.projectId, params.hookId);
      return { kind: 'deleted', message: `Deploy hook ${params.hookId} revoked` };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/hooks/deploy/:key',
    tag: 'deployments',
    summary:
      "A deploy hook's URL: queues a build of its branch's head (no token; any body is ignored; 60 requests an hour per hook by default)",
    auth: false,
    anyBody: true,
    bodyTooLarge: 'A deploy hook reads at most 64 KiB of a request body (and ignores it); send less, or none',
    params: TriggerParams,
    response: DeployHookTriggered,
    successStatus: 201,
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
