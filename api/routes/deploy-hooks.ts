import { z } from 'zod';
import { PageQuery } from '../schemas/common.ts';
import {
  CreateDeployHookBody,
  CreatedDeployHook,
  DeployHook,
  DeployHookTriggered,
} from '../schemas/deploy-hooks.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const HookParams = ProjectParams.extend({ hookId: z.string() });
/** `<hook id>.<secret>`: the hook's URL is the credential (docs/api/deploy-hooks.md). */
const TriggerParams = z.object({ key: z.string() });

/** Deploy hooks: secret URLs that queue a build of a branch's head (docs/api/deploy-hooks.md). */
export const deployHooks = {
  create: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/deploy-hooks',
    tag: 'deployments',
    summary: 'Make a deploy hook for a branch (admins); its URL, with the secret, is shown this once',
    params: ProjectParams,
    body: CreateDeployHookBody,
    response: CreatedDeployHook,
    successStatus: 201,
  }),
  list: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/deploy-hooks',
    tag: 'deployments',
    summary: "List the project's deploy hooks, newest first, without their secrets",
    params: ProjectParams,
    query: PageQuery,
    response: DeployHook,
    responseKind: 'list',
  }),
  remove: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/deploy-hooks/:hookId',
    tag: 'deployments',
    summary: 'Revoke a deploy hook (admins): its URL answers 404 from now on',
    params: HookParams,
    responseKind: 'deleted',
  }),
  trigger: contract({
    method: 'POST',
    url: '/v1/hooks/deploy/:key',
    tag: 'deployments',
    summary:
      "A deploy hook's URL: queues a build of its branch's head (no token; any body is ignored; 60 requests an hour per hook by default)",
    auth: false,
    anyBody: true,
    params: TriggerParams,
    response: DeployHookTriggered,
    successStatus: 201,
  }),
};
