import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { CreateDeploymentBody, ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import { createDeployment, listDeployments } from '../../features/deployments/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { projectContext } from '../context.ts';
import { SECURITY_HEADERS, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { deploymentRows, projectPage } from '../pages/project.ts';
import { projectDeployHookRoutes } from './project-deploy-hooks.ts';
import { projectDomainRoutes } from './project-domains.ts';
import { projectEnvRoutes } from './project-env.ts';
import { projectMetricRoutes } from './project-metrics.ts';
import { doneMessage, params } from './project-tab.ts';
import { projectWebhookRoutes } from './project-webhooks.ts';

/** The Deploy form as the API's create body: empty fields are left to the API's defaults. */
export function deploymentBody(f: Record<string, string>): CreateDeploymentBody {
  const given = (k: string) => (f[k]?.trim() ? { [k]: f[k].trim() } : {});
  return parseOrThrow(
    CreateDeploymentBody,
    {
      ...given('branch'),
      ...given('commitHash'),
      ...given('target'),
      ...(f.cache === 'on' ? {} : { cache: false }),
    },
    'body',
  );
}

/** A project's tabs: deployments (here), domains, environment variables, webhooks, deploy hooks, metrics. */
export function projectRoutes(scope: FastifyInstance, kit: Kit): void {
  projectDeploymentRoutes(scope, kit);
  projectDomainRoutes(scope, kit);
  projectEnvRoutes(scope, kit);
  projectWebhookRoutes(scope, kit);
  projectDeployHookRoutes(scope, kit);
  projectMetricRoutes(scope, kit);
}

/** The project's page: its deployments (filtered, paged, refreshed live) and the Deploy form. */
function projectDeploymentRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;

  const project = async (
    req: FastifyRequest,
    view: View,
    actor: Actor,
    state: Pick<Parameters<typeof projectPage>[1], 'message' | 'deploy'>,
  ) => {
    const ctx = await projectContext(deps, actor, params(req).projectId!);
    const data = await deploymentsOf(deps, req, actor, ctx.project.id);
    return projectPage(view, { ...ctx, ...data, now: deps.clock.now(), ...state });
  };
  scope.get(
    '/projects/:projectId',
    kit.page(async ({ req, view, session }) =>
      project(req, view, session.actor, { message: doneMessage(req) }),
    ),
  );
  // The Deploy form: the API's create, then the new deployment's page, which follows it.
  scope.post(
    '/projects/:projectId/deployments',
    kit.page(async (ctx) => {
      const { projectId } = params(ctx.req);
      let made;
      try {
        made = await createDeployment(deps, ctx.session.actor, projectId!, deploymentBody(ctx.form));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        const page = await project(ctx.req, ctx.view, ctx.session.actor, {
          deploy: { error: err.message, typed: ctx.form },
        });
        return kit.send(ctx.reply, page, err.status);
      }
      return kit.redirect(ctx.reply, `/deployments/${made.id}?done=deploy`);
    }),
  );

  scope.get(
    '/projects/:projectId/rows',
    kit.page(async ({ req, reply, view, session }) => {
      const ctx = await projectContext(deps, session.actor, params(req).projectId!);
      const { deployments } = await deploymentsOf(deps, req, session.actor, ctx.project.id);
      return reply
        .headers(SECURITY_HEADERS)
        .type('text/html; charset=utf-8')
        .send(deploymentRows(view, ctx.project, deployments.items, deps.clock.now()).value);
    }),
  );
}

/** The deployments table's data; the filter as typed is kept when it is refused. */
async function deploymentsOf(deps: Deps, req: FastifyRequest, actor: Actor, projectId: string) {
  const typed: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.query as Record<string, unknown>)) {
    if (
      typeof v === 'string' &&
      v !== '' &&
      ['status', 'target', 'branch', 'commitHash', 'cursor'].includes(k)
    )
      typed[k] = v;
  }
  let query = parseOrThrow(ListDeploymentsQuery, { limit: '20' }, 'query');
  let error: string | undefined;
  try {
    query = parseOrThrow(ListDeploymentsQuery, { ...typed, limit: '20' }, 'query');
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    error = err.message;
  }
  let found;
  try {
    found = await listDeployments(deps, actor, projectId, query);
  } catch (err) {
    // A cursor that is not one of this list's: say so above the first page.
    if (!(err instanceof ApiError) || query.cursor === undefined) throw err;
    error = err.message;
    const { cursor: _, ...first } = query;
    query = first;
    delete typed.cursor;
    found = await listDeployments(deps, actor, projectId, query);
  }
  return { query, typed, error, deployments: found };
}
