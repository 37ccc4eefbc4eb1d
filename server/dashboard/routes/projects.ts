import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { CreateDeploymentBody, ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import { AddDomainBody } from '../../../api/schemas/domains.ts';
import { CreateEnvBody, EnvEnvironment, UpdateEnvBody } from '../../../api/schemas/env.ts';
import { MetricsQuery } from '../../../api/schemas/monitoring.ts';
import { CreateWebhookBody } from '../../../api/schemas/webhooks.ts';
import { CreateDeployHookBody } from '../../../api/schemas/deploy-hooks.ts';
import { parseOrThrow } from '../../http/validation.ts';
import { createDeployHook } from '../../services/deploy-hooks/create-deploy-hook.ts';
import { deleteDeployHook } from '../../services/deploy-hooks/delete-deploy-hook.ts';
import { listDeployHooks } from '../../services/deploy-hooks/list-deploy-hooks.ts';
import { createDeployment } from '../../services/deployments/create-deployment.ts';
import { listDeployments } from '../../services/deployments/list-deployments.ts';
import type { Actor } from '../../services/deps.ts';
import { addDomain } from '../../services/domains/add-domain.ts';
import { deleteDomain } from '../../services/domains/delete-domain.ts';
import { listDomains } from '../../services/domains/list-domains.ts';
import { verifyDomain } from '../../services/domains/verify-domain.ts';
import { createEnvVar } from '../../services/env/create-env-var.ts';
import { deleteEnvVar } from '../../services/env/delete-env-var.ts';
import { listEnvVars } from '../../services/env/list-env-vars.ts';
import { updateEnvVar } from '../../services/env/update-env-var.ts';
import { getHealth } from '../../services/monitoring/get-health.ts';
import { getMetricSeries } from '../../services/monitoring/get-metric-series.ts';
import { getMetrics } from '../../services/monitoring/get-metrics.ts';
import { listAlerts } from '../../services/monitoring/list-alerts.ts';
import { createWebhook } from '../../services/webhooks/create-webhook.ts';
import { deleteWebhook } from '../../services/webhooks/delete-webhook.ts';
import { listDeliveries } from '../../services/webhooks/list-deliveries.ts';
import { listWebhooks } from '../../services/webhooks/list-webhooks.ts';
import { redeliver } from '../../services/webhooks/redeliver.ts';
import { projectContext } from '../context.ts';
import { SECURITY_HEADERS, submit, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { domainsPage } from '../pages/domains.ts';
import { envPage } from '../pages/env.ts';
import { metricsPage } from '../pages/metrics.ts';
import { deployHooksPage } from '../pages/deploy-hooks.ts';
import { deploymentRows, projectPage } from '../pages/project.ts';
import { webhooksPage } from '../pages/webhooks.ts';

const DONE: Record<string, string> = {
  added: 'Added.',
  verified: 'Verified.',
  removed: 'Removed.',
  saved: 'Saved. It applies to the next deployment.',
  redelivered: 'Sent again.',
  revoked: 'Revoked: its URL no longer deploys.',
  created: 'Project created.',
};
const doneMessage = (req: FastifyRequest) => {
  const done = (req.query as { done?: string }).done;
  return done && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
};
const params = (req: FastifyRequest) => req.params as Record<string, string>;

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

/** A project's tabs: deployments, domains, environment variables, webhooks, deploy hooks, metrics. */
export function projectRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;

  /** The deployments table's data; the filter as typed is kept when it is refused. */
  const deploymentsOf = async (req: FastifyRequest, actor: Actor, projectId: string) => {
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
  };

  const project = async (
    req: FastifyRequest,
    view: View,
    actor: Actor,
    state: Pick<Parameters<typeof projectPage>[1], 'message' | 'deploy'>,
  ) => {
    const ctx = await projectContext(deps, actor, params(req).projectId!);
    const data = await deploymentsOf(req, actor, ctx.project.id);
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
      const { deployments } = await deploymentsOf(req, session.actor, ctx.project.id);
      return reply
        .headers(SECURITY_HEADERS)
        .type('text/html; charset=utf-8')
        .send(deploymentRows(view, ctx.project, deployments.items, deps.clock.now()).value);
    }),
  );

  // Domains.
  const domains = async (
    view: View,
    actor: Actor,
    projectId: string,
    state: Parameters<typeof domainsPage>[2] = {},
  ) => {
    const ctx = await projectContext(deps, actor, projectId);
    const { items } = await listDomains(deps, actor, ctx.project.id, { page: 1, limit: 100 });
    return domainsPage(view, { ...ctx, domains: items, now: deps.clock.now() }, state);
  };
  scope.get(
    '/projects/:projectId/domains',
    kit.page(async ({ req, view, session }) =>
      domains(view, session.actor, params(req).projectId!, { message: doneMessage(req) }),
    ),
  );
  scope.post(
    '/projects/:projectId/domains',
    kit.page(async (ctx) => {
      const { projectId } = params(ctx.req);
      return submit(
        kit,
        ctx,
        () =>
          addDomain(
            deps,
            ctx.session.actor,
            projectId!,
            parseOrThrow(AddDomainBody, { domain: ctx.form.domain }, 'body'),
          ),
        `/projects/${projectId}/domains?done=added`,
        (error) => domains(ctx.view, ctx.session.actor, projectId!, { error, typed: ctx.form.domain ?? '' }),
      );
    }),
  );
  scope.post(
    '/projects/:projectId/domains/:domain/:op',
    kit.page(async (ctx) => {
      const { projectId, domain, op } = params(ctx.req);
      if (op !== 'verify' && op !== 'delete') throw ApiError.notFound(`Page ${ctx.req.url}`);
      return submit(
        kit,
        ctx,
        () =>
          op === 'verify'
            ? verifyDomain(deps, ctx.session.actor, projectId!, domain!)
            : deleteDomain(deps, ctx.session.actor, projectId!, domain!),
        `/projects/${projectId}/domains?done=${op === 'verify' ? 'verified' : 'removed'}`,
        (error) => domains(ctx.view, ctx.session.actor, projectId!, { error }),
      );
    }),
  );

  // Environment variables.
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

  // Webhooks.
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

  // Deploy hooks.
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

  // Metrics, health and alerts.
  scope.get(
    '/projects/:projectId/metrics',
    kit.page(async ({ req, view, session }) => {
      const ctx = await projectContext(deps, session.actor, params(req).projectId!);
      const period = (req.query as { period?: string }).period;
      const q = parseOrThrow(MetricsQuery, period ? { period } : {}, 'query');
      const [metrics, series, health, alerts] = await Promise.all([
        getMetrics(deps, session.actor, ctx.project.id, q),
        getMetricSeries(deps, session.actor, ctx.project.id, q.period),
        getHealth(deps, session.actor, ctx.project.id),
        listAlerts(deps, session.actor, ctx.project.id, { page: 1, limit: 20 }),
      ]);
      return metricsPage(view, {
        ...ctx,
        metrics,
        series,
        health,
        alerts: alerts.items,
        now: deps.clock.now(),
      });
    }),
  );
}
