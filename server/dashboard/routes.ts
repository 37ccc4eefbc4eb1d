import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../api/errors.ts';
import { ListDeploymentsQuery, LogType } from '../../api/schemas/deployments.ts';
import { authenticate } from '../http/auth.ts';
import { parseOrThrow } from '../http/validation.ts';
import { roleIn } from '../services/access.ts';
import { createDeployment } from '../services/deployments/create-deployment.ts';
import { requireDeployment } from '../services/deployments/find-deployment.ts';
import { parseLastEventId, streamLogs } from '../services/deployments/follow-logs.ts';
import { getDeployment } from '../services/deployments/get-deployment.ts';
import { listDeployments } from '../services/deployments/list-deployments.ts';
import { promoteDeployment } from '../services/deployments/promote-deployment.ts';
import { rollbackDeployment } from '../services/deployments/rollback-deployment.ts';
import type { Deps } from '../services/deps.ts';
import { getOrganization } from '../services/organizations/get-organization.ts';
import { listMembers } from '../services/organizations/list-members.ts';
import { listOrganizations } from '../services/organizations/list-organizations.ts';
import { getProject, listProjects } from '../services/projects.ts';
import { ansiToHtml } from './ansi.ts';
import { ASSETS, asset, type AssetName } from './assets.ts';
import { Html } from './html.ts';
import type { View } from './layout.ts';
import { readLog } from './read-log.ts';
import { confirmPage } from './pages/confirm.ts';
import { actionsFor, deploymentPage, type Action } from './pages/deployment.ts';
import { errorPage } from './pages/error.ts';
import { homePage } from './pages/home.ts';
import { organizationPage } from './pages/organization.ts';
import { deploymentRows, projectPage } from './pages/project.ts';
import { signInPage } from './pages/sign-in.ts';
import {
  closeSession,
  csrfMatches,
  openSession,
  readSession,
  sessionCookie,
  type Session,
} from './session.ts';

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const ACTIONS = new Set<Action>(['promote', 'rollback', 'redeploy']);
const DONE: Record<Action, string> = {
  promote: 'Promoted: this deployment now serves production.',
  rollback: 'Rolled back: production now serves this build again.',
  redeploy: 'Redeploy started: this is the new deployment.',
};

interface Ctx {
  req: FastifyRequest;
  reply: FastifyReply;
  view: View;
  session: Session;
}

/**
 * The web dashboard, served by the API role at `/`. Pages call the same services as the API with
 * the signed-in user as the actor, so the API's access rules decide what each page shows and
 * allows. State changes are forms that carry the session's CSRF value and must come from this
 * origin.
 */
export function registerDashboard(app: FastifyInstance, deps: Deps): void {
  const publicUrl = deps.config.publicApiUrl ? new URL(deps.config.publicApiUrl) : null;
  const base = publicUrl ? publicUrl.pathname.replace(/\/+$/, '') : '';
  const secure = publicUrl?.protocol === 'https:';
  const githubSignIn = false;

  const send = (reply: FastifyReply, body: Html, status = 200) =>
    reply.status(status).headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(body.value);

  const toSignIn = (req: FastifyRequest, reply: FastifyReply) => {
    const next = base + req.url;
    return reply.redirect(`${base}/sign-in?next=${encodeURIComponent(next)}`, 303);
  };

  /** A page that needs a session: renders the API's refusals as pages with the API's status. */
  const page =
    (handler: (ctx: Ctx) => Promise<Html | FastifyReply>) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      const session = await readSession(deps, req.headers.cookie);
      if (!session) return toSignIn(req, reply);
      const view = { base, session };
      if (req.method === 'POST') {
        const form = (req.body ?? {}) as Record<string, unknown>;
        if (!sameOrigin(req) || !csrfMatches(session, form._csrf)) {
          return send(
            reply,
            errorPage(
              view,
              'Form expired',
              'This form was not sent from this dashboard or has expired; go back, reload the page and try again.',
            ),
            403,
          );
        }
      }
      try {
        const out = await handler({ req, reply, view, session });
        return out instanceof Html ? send(reply, out) : out;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        const title =
          err.status === 404 ? 'Not found' : err.status === 403 ? 'Not allowed' : 'Something went wrong';
        return send(reply, errorPage(view, title, err.message), err.status);
      }
    };

  /** The Origin (or Referer) of a form post must be this service: a cross-site form is refused. */
  const sameOrigin = (req: FastifyRequest) => {
    const from = req.headers.origin ?? req.headers.referer;
    if (!from) return true; // Browsers send Origin on every POST; other clients have no ambient cookies to abuse.
    let origin: string;
    try {
      origin = new URL(from).origin;
    } catch {
      return false;
    }
    if (publicUrl && origin === publicUrl.origin) return true;
    try {
      return origin === new URL(`${req.protocol}://${req.headers.host ?? ''}`).origin;
    } catch {
      return false;
    }
  };

  void app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );

    scope.get('/assets/:name', async (req, reply) => {
      const name = (req.params as { name: string }).name;
      if (!Object.hasOwn(ASSETS, name)) return reply.status(404).type('text/plain').send('Not found');
      const a = asset(name as AssetName);
      const immutable = (req.query as { v?: string }).v === a.hash;
      void reply
        .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
        .header('etag', `"${a.hash}"`)
        .header('vary', 'accept-encoding')
        .header('x-content-type-options', 'nosniff')
        .type(a.type);
      if (req.headers['if-none-match'] === `"${a.hash}"`) return reply.status(304).send();
      const accept = String(req.headers['accept-encoding'] ?? '');
      if (/\bbr\b/.test(accept)) return reply.header('content-encoding', 'br').send(a.br);
      if (/\bgzip\b/.test(accept)) return reply.header('content-encoding', 'gzip').send(a.gzip);
      return reply.send(a.body);
    });

    scope.get('/sign-in', async (req, reply) => {
      const q = req.query as { next?: string; signed_out?: string };
      const session = await readSession(deps, req.headers.cookie);
      const next = safeNext(base, q.next);
      if (session) return reply.redirect(next, 303);
      return send(
        reply,
        signInPage(
          { base, session: null },
          {
            next,
            github: githubSignIn,
            ...(q.signed_out ? { message: 'You are signed out.' } : {}),
          },
        ),
      );
    });

    scope.post('/sign-in', async (req, reply) => {
      const form = (req.body ?? {}) as Record<string, string | undefined>;
      const next = safeNext(base, form.next);
      const view = { base, session: null };
      if (!sameOrigin(req)) {
        return send(
          reply,
          signInPage(view, { next, github: githubSignIn, error: 'Sign in from this dashboard’s own page.' }),
          403,
        );
      }
      const token = (form.token ?? '').trim();
      try {
        if (!token) throw new ApiError('UNAUTHORIZED', 'Enter an API token (it starts with slw_).');
        const { actor } = await authenticate(deps, `Bearer ${token}`);
        const { secret, expiresAt } = await openSession(deps, actor.userId, actor.tokenId);
        return reply
          .header('set-cookie', sessionCookie(secret, { path: base || '/', secure, expires: expiresAt }))
          .redirect(next, 303);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return send(reply, signInPage(view, { next, github: githubSignIn, error: err.message }), 401);
      }
    });

    scope.post(
      '/sign-out',
      page(async ({ reply, session }) => {
        await closeSession(deps, session.idHash);
        return reply
          .header('set-cookie', sessionCookie('', { path: base || '/', secure }))
          .redirect(`${base}/sign-in?signed_out=1`, 303);
      }),
    );

    scope.get(
      '/',
      page(async ({ view, session }) => {
        const { items: orgs } = await listOrganizations(deps, session.actor, { limit: 100, offset: 0 });
        const withProjects = await Promise.all(
          orgs.map(async (org) => {
            const { items, total } = await listProjects(deps, session.actor, {
              org: org.id,
              page: 1,
              limit: 12,
            });
            return { org, projects: items, total };
          }),
        );
        return homePage(view, withProjects, deps.clock.now());
      }),
    );

    scope.get(
      '/orgs/:org',
      page(async ({ req, view, session }) => {
        const { org: name } = req.params as { org: string };
        const pageNo = pageOf(req.query);
        const org = await getOrganization(deps, session.actor, name);
        const [projects, members] = await Promise.all([
          listProjects(deps, session.actor, { org: org.id, page: pageNo, limit: 50 }),
          listMembers(deps, session.actor, org.id, { limit: 100, offset: 0 }),
        ]);
        return organizationPage(view, {
          org,
          projects: { ...projects, page: pageNo, limit: 50 },
          members: members.items,
          now: deps.clock.now(),
        });
      }),
    );

    /** The project page and, alone, its table's rows (the page refreshes them while builds run). */
    const projectData = async (req: FastifyRequest, session: Session) => {
      const { projectId } = req.params as { projectId: string };
      const typed: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.query as Record<string, unknown>)) {
        if (
          typeof v === 'string' &&
          v !== '' &&
          ['status', 'target', 'branch', 'commitHash', 'page'].includes(k)
        )
          typed[k] = v;
      }
      const project = await getProject(deps, session.actor, projectId);
      let query = parseOrThrow(ListDeploymentsQuery, { limit: '20' }, 'query');
      let error: string | undefined;
      try {
        query = parseOrThrow(ListDeploymentsQuery, { ...typed, limit: '20' }, 'query');
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        error = err.message;
      }
      const deployments = await listDeployments(deps, session.actor, project.id, query);
      return { project, query, typed, error, deployments };
    };

    scope.get(
      '/projects/:projectId',
      page(async ({ req, view, session }) => {
        const data = await projectData(req, session);
        const [org, role] = await Promise.all([
          getOrganization(deps, session.actor, data.project.organizationId),
          roleIn(deps, session.actor, data.project.organizationId),
        ]);
        return projectPage(view, {
          ...data,
          orgName: org.name,
          role: role ?? 'viewer',
          now: deps.clock.now(),
        });
      }),
    );

    scope.get(
      '/projects/:projectId/rows',
      page(async ({ req, reply, view, session }) => {
        const { project, deployments } = await projectData(req, session);
        return reply
          .headers(SECURITY_HEADERS)
          .type('text/html; charset=utf-8')
          .send(deploymentRows(view, project, deployments.items, deps.clock.now()).value);
      }),
    );

    /** A deployment with its project, organization name and the caller's role. */
    const deploymentContext = async (session: Session, deploymentId: string) => {
      const deployment = await getDeployment(deps, session.actor, deploymentId);
      const project = await getProject(deps, session.actor, deployment.projectId);
      const [org, role] = await Promise.all([
        getOrganization(deps, session.actor, project.organizationId),
        roleIn(deps, session.actor, project.organizationId),
      ]);
      return { deployment, project, orgName: org.name, role: role ?? 'viewer' };
    };

    scope.get(
      '/deployments/:deploymentId',
      page(async ({ req, view, session }) => {
        const { deploymentId } = req.params as { deploymentId: string };
        const q = req.query as { log?: string; done?: string };
        const ctx = await deploymentContext(session, deploymentId);
        const type = q.log === 'runtime' ? 'runtime' : 'build';
        const log = await readLog(deps, ctx.deployment.id, type, 2000);
        const done = ACTIONS.has(q.done as Action) ? DONE[q.done as Action] : undefined;
        return deploymentPage(view, { ...ctx, log: { type, ...log }, message: done, now: deps.clock.now() });
      }),
    );

    scope.get(
      '/deployments/:deploymentId/log.txt',
      page(async ({ req, reply, session }) => {
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

    scope.get(
      '/deployments/:deploymentId/log/stream',
      page(async ({ req, reply, session }) => {
        const { deploymentId } = req.params as { deploymentId: string };
        const { deployment } = await requireDeployment(deps, session.actor, deploymentId, 'viewer');
        const after =
          parseLastEventId(req.headers['last-event-id']) ??
          parseLastEventId((req.query as { after?: string }).after);
        reply.hijack();
        await streamLogs(deps, reply.raw, deployment.id, {
          type: 'build',
          tail: 2000,
          afterId: after,
          headers: { 'cache-control': 'no-store' },
          render: ansiToHtml,
          checkAccess: async () => {
            const still = await readSession(deps, req.headers.cookie);
            if (!still) return 'signed out';
            try {
              await requireDeployment(deps, still.actor, deployment.id, 'viewer');
              return null;
            } catch (err) {
              if (err instanceof ApiError) return 'no longer a member of the organization';
              throw err;
            }
          },
        });
        return reply;
      }),
    );

    const actionRoute = async ({ req, reply, view, session }: Ctx) => {
      const { deploymentId, action } = req.params as { deploymentId: string; action: string };
      if (!ACTIONS.has(action as Action)) throw ApiError.notFound(`Page ${req.url.split('?')[0]}`);
      const act = action as Action;
      const ctx = await deploymentContext(session, deploymentId);
      if (req.method === 'GET') {
        if (!actionsFor(ctx.deployment, ctx.project, ctx.role).includes(act) && ctx.role === 'viewer') {
          throw ApiError.forbidden(
            `This needs the role of a developer, admin or owner in the organization; you are ${ctx.role}`,
          );
        }
        return confirmPage(view, { action: act, ...ctx });
      }
      try {
        const result = await perform(deps, session, act, ctx.deployment, ctx.project);
        return reply.redirect(`${base}/deployments/${result.id}?done=${act}`, 303);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return send(reply, confirmPage(view, { action: act, ...ctx, error: err.message }), err.status);
      }
    };
    scope.get('/deployments/:deploymentId/:action', page(actionRoute));
    scope.post('/deployments/:deploymentId/:action', page(actionRoute));
  });
}

async function perform(
  deps: Deps,
  session: Session,
  action: Action,
  d: Awaited<ReturnType<typeof getDeployment>>,
  project: Awaited<ReturnType<typeof getProject>>,
) {
  switch (action) {
    case 'promote':
      return promoteDeployment(deps, session.actor, d.id);
    case 'rollback':
      if (d.id === project.productionDeploymentId) return rollbackDeployment(deps, session.actor, d.id, {});
      if (!project.productionDeploymentId) {
        throw ApiError.conflict(`Project ${project.name} has no production deployment to roll back from`);
      }
      return rollbackDeployment(deps, session.actor, project.productionDeploymentId, { to: d.id });
    case 'redeploy':
      return createDeployment(deps, session.actor, project.id, {
        branch: d.branch,
        target: d.target,
        ...(d.commitHash ? { commitHash: d.commitHash } : {}),
        message: `Redeploy of ${d.id}`,
      });
  }
}

/** Where to go after signing in: a path of this dashboard, never another site. */
function safeNext(base: string, next: string | undefined): string {
  const home = `${base}/`;
  if (!next || !next.startsWith(home) || next.startsWith('//') || /[\\\r\n]/.test(next)) return home;
  return next;
}

function pageOf(query: unknown): number {
  const p = Number((query as { page?: string }).page ?? 1);
  return Number.isInteger(p) && p >= 1 && p <= 1_000_000 ? p : 1;
}
