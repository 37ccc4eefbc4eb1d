import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import type { Deployment } from '../../../api/schemas/deployments.ts';
import { LogType } from '../../../api/schemas/deployments.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import {
  redeployDeployment,
  requireDeployment,
  logEvents,
  parseLastEventId,
  logFrames,
  getDeployment,
  promoteDeployment,
  rollbackDeployment,
} from '../../features/deployments/index.ts';
import { sendEventStream } from '../../platform/http/sse.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { ansiToHtml } from '../ansi.ts';
import { projectContext } from '../context.ts';
import { SECURITY_HEADERS, type Ctx, type Kit } from '../kit.ts';
import { confirmPage } from '../pages/confirm.ts';
import { actionsFor, deploymentPage, type Action } from '../pages/deployment.ts';
import { readLog } from '../read-log.ts';
import { readSession } from '../../features/identity/index.ts';

const ACTIONS = new Set<Action>(['promote', 'rollback', 'redeploy']);
const DONE: Record<Action | 'deploy' | 'created', string> = {
  promote: 'Promoted: this deployment now serves production.',
  rollback: 'Rolled back: production now serves this build again.',
  redeploy: 'Redeploy started: this is the new deployment.',
  deploy: 'Deployment started: this page follows it.',
  created: 'Project created: its first deployment has started, and this page follows it.',
};

/** A deployment's page, its log (streamed while it builds, or downloaded), and its actions. */
export function deploymentRoutes(scope: FastifyInstance, kit: Kit): void {
  deploymentPageRoute(scope, kit);
  statusRoute(scope, kit);
  logDownloadRoute(scope, kit);
  logStreamRoute(scope, kit);
  actionRoutes(scope, kit);
}

/** A deployment with its project, as its pages show them. */
async function deploymentContext(deps: Deps, actor: Actor, deploymentId: string) {
  const deployment = await getDeployment(deps, actor, deploymentId);
  return { deployment, ...(await projectContext(deps, actor, deployment.projectId)) };
}

/** The deployment's page, with the build or runtime log and a notice of what was just done. */
function deploymentPageRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.get(
    '/deployments/:deploymentId',
    kit.page(async ({ req, view, session }) => {
      const { deploymentId } = req.params as { deploymentId: string };
      const q = req.query as { log?: string; done?: string };
      const ctx = await deploymentContext(deps, session.actor, deploymentId);
      const type = q.log === 'runtime' ? 'runtime' : 'build';
      const log = await readLog(deps, ctx.deployment.id, type, 2000);
      const done = q.done && Object.hasOwn(DONE, q.done) ? DONE[q.done as keyof typeof DONE] : undefined;
      return deploymentPage(view, { ...ctx, log: { type, ...log }, message: done, now: deps.clock.now() });
    }),
  );
}

/** What the deployment page's script polls while the deployment is on its way. */
function statusRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.get(
    '/deployments/:deploymentId/status',
    kit.page(async ({ req, reply, session }) => {
      const { deploymentId } = req.params as { deploymentId: string };
      const d = await getDeployment(deps, session.actor, deploymentId);
      return reply
        .headers(SECURITY_HEADERS)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ id: d.id, status: d.status, errorMessage: d.errorMessage }));
    }),
  );
}

/** A log as a text file to download. */
function logDownloadRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.get(
    '/deployments/:deploymentId/log.txt',
    kit.page(async ({ req, reply, session }) => {
      const { deploymentId } = req.params as { deploymentId: string };
      const type = LogType.safeParse((req.query as { type?: string }).type ?? 'build');
      if (!type.success)
        throw ApiError.validation([{ path: 'type', message: 'must be build, runtime or error' }]);
      const { deployment } = await requireDeployment(deps, session.actor, deploymentId, 'viewer');
      const log = await readLog(deps, deployment.id, type.data, 100_000);
      return reply
        .headers({
          ...SECURITY_HEADERS,
          'content-disposition': `attachment; filename="${deployment.id}-${type.data}.log"`,
        })
        .type('text/plain; charset=utf-8')
        .send(log.lines.map((l) => l.line).join('\n') + '\n');
    }),
  );
}

/** The build log as it grows (server-sent events of HTML lines), while the reader may still read it. */
function logStreamRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.get(
    '/deployments/:deploymentId/log/stream',
    kit.page(async ({ req, reply, session }) => {
      const { deploymentId } = req.params as { deploymentId: string };
      const { deployment } = await requireDeployment(deps, session.actor, deploymentId, 'viewer');
      const after =
        parseLastEventId(req.headers['last-event-id']) ??
        parseLastEventId((req.query as { after?: string }).after);
      // The stream ends once the session does, or the reader leaves the organization.
      const checkAccess = async () => {
        const still = await readSession(deps, req.headers.cookie);
        if (!still) return 'signed out';
        try {
          await requireDeployment(deps, still.actor, deployment.id, 'viewer');
          return null;
        } catch (err) {
          if (err instanceof ApiError) return 'no longer a member of the organization';
          throw err;
        }
      };
      reply.hijack();
      await sendEventStream(
        reply.raw,
        (signal) =>
          logFrames(
            logEvents(
              deps,
              deployment.id,
              { type: 'build', tail: 2000, afterId: after, checkAccess },
              signal,
            ),
            ansiToHtml,
          ),
        { log: deps.log },
      );
      return reply;
    }),
  );
}

/** Promote, roll back, redeploy: a page that asks to confirm (GET), then the action (POST). */
function actionRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  const action = async ({ req, reply, view, session, form }: Ctx) => {
    const { deploymentId, action } = req.params as { deploymentId: string; action: string };
    if (!ACTIONS.has(action as Action)) throw ApiError.notFound(`Page ${req.url.split('?')[0]}`);
    const act = action as Action;
    const ctx = await deploymentContext(deps, session.actor, deploymentId);
    if (req.method === 'GET') {
      if (ctx.role === 'viewer' && !actionsFor(ctx.deployment, ctx.project, ctx.role).includes(act)) {
        throw ApiError.forbidden(
          `This needs the role of a developer, admin or owner in the organization; you are ${ctx.role}`,
        );
      }
      return confirmPage(view, { action: act, ...ctx });
    }
    try {
      const result = await perform(deps, session.actor, act, ctx.deployment, ctx.project, {
        cache: form.cache === 'on',
      });
      return kit.redirect(reply, `/deployments/${result.id}?done=${act}`);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return kit.send(reply, confirmPage(view, { action: act, ...ctx, error: err.message }), err.status);
    }
  };
  scope.get('/deployments/:deploymentId/:action', kit.page(action));
  scope.post('/deployments/:deploymentId/:action', kit.page(action));
}

/** The API's own operations, with the signed-in user as the caller; a redeploy with or without the build cache. */
async function perform(
  deps: Deps,
  actor: Actor,
  action: Action,
  d: Deployment,
  project: Project,
  opts: { cache: boolean },
) {
  switch (action) {
    case 'promote':
      return promoteDeployment(deps, actor, d.id);
    case 'rollback':
      if (d.id === project.productionDeploymentId) return rollbackDeployment(deps, actor, d.id, {});
      if (!project.productionDeploymentId) {
        throw ApiError.conflict(`Project ${project.name} has no production deployment to roll back from`);
      }
      return rollbackDeployment(deps, actor, project.productionDeploymentId, { to: d.id });
    case 'redeploy':
      return redeployDeployment(deps, actor, d.id, opts);
  }
}
