import type { z } from 'zod';
import { deployHooks } from '../routes/deploy-hooks.ts';
import type { CreateDeployHookBody } from '../schemas/deploy-hooks.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

/** Deploy hooks: secret URLs that queue a build of a branch's head when POSTed. */
export function deployHooksApi(c: Caller) {
  return {
    /** Makes a hook (admins, 201): `url` carries its secret and is shown this once. */
    create: (projectId: string, body: z.input<typeof CreateDeployHookBody>, o?: CallOptions) =>
      c.call(deployHooks.create, { projectId }, { ...o, body }),
    /** The project's hooks, newest first, each with `urlPrefix` (its URL up to the secret). */
    list: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.call(deployHooks.list, { projectId }, { ...o, query }),
    /** Revokes a hook (admins): its URL answers 404 from then on. */
    remove: (projectId: string, hookId: string, o?: CallOptions) =>
      c.call(deployHooks.remove, { projectId, hookId }, o),
    /**
     * POSTs a hook's URL, given as its last path segment `<hook id>.<secret>` (the part after
     * `/v1/hooks/deploy/`); needs no token. Answers the deployment queued, or the one still queued
     * from the hook's previous call (`created: false`).
     */
    trigger: (key: string, o?: CallOptions) => c.call(deployHooks.trigger, { key }, o),
  };
}
