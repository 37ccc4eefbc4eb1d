import type { FastifyInstance } from 'fastify';
import { CreateEnvBody, EnvEnvironment, UpdateEnvBody } from '../../../api/schemas/env.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import type { Actor } from '../../platform/deps/deps.ts';
import { createEnvVar, deleteEnvVar, listEnvVars, updateEnvVar } from '../../features/deployments/index.ts';
import { projectContext } from '../context.ts';
import { submit, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { envPage } from '../pages/env.ts';
import { doneMessage, params } from './project-tab.ts';

/** Environment variables: listed (secrets masked), added, changed and removed. */
export function projectEnvRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  const env = async (
    view: View,
    actor: Actor,
    projectId: string,
    state: Parameters<typeof envPage>[2] = {},
  ) => {
    const ctx = await projectContext(deps, actor, projectId);
    const { items } = await listEnvVars(deps, actor, ctx.project.id, { page: 1, limit: 100 });
    return envPage(view, { ...ctx, vars: items }, state);
  };
  scope.get(
    '/projects/:projectId/env',
    kit.page(async ({ req, view, session }) =>
      env(view, session.actor, params(req).projectId!, { message: doneMessage(req) }),
    ),
  );
  scope.post(
    '/projects/:projectId/env',
    kit.page(async (ctx) => {
      const { projectId } = params(ctx.req);
      const f = ctx.form;
      return submit(
        kit,
        ctx,
        () =>
          createEnvVar(
            deps,
            ctx.session.actor,
            projectId!,
            parseOrThrow(
              CreateEnvBody,
              { key: f.key, value: f.value, environment: f.environment, encrypted: f.encrypted === 'on' },
              'body',
            ),
          ),
        `/projects/${projectId}/env?done=added`,
        (error) => env(ctx.view, ctx.session.actor, projectId!, { error, typed: f }),
      );
    }),
  );
  scope.post(
    '/projects/:projectId/env/:key',
    kit.page(async (ctx) => {
      const { projectId, key } = params(ctx.req);
      const q = ctx.req.query as { environment?: string; op?: string };
      const environment = EnvEnvironment.safeParse(q.environment);
      const selector = environment.success ? { environment: environment.data } : {};
      return submit(
        kit,
        ctx,
        () =>
          q.op === 'delete'
            ? deleteEnvVar(deps, ctx.session.actor, projectId!, key!, selector)
            : updateEnvVar(
                deps,
                ctx.session.actor,
                projectId!,
                key!,
                selector,
                parseOrThrow(UpdateEnvBody, { value: ctx.form.value }, 'body'),
              ),
        `/projects/${projectId}/env?done=${q.op === 'delete' ? 'removed' : 'saved'}`,
        (error) => env(ctx.view, ctx.session.actor, projectId!, { error }),
      );
    }),
  );
}
