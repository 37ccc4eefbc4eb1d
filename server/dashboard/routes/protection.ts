import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { CreateShareLinkBody } from '../../../api/schemas/protection.ts';
import { UpdateProjectBody } from '../../../api/schemas/projects.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import type { Actor } from '../../platform/deps/deps.ts';
import { updateProject } from '../../features/deployments/index.ts';
import {
  rotateBypassSecret,
  freshResolver,
  issueProtectionCode,
  createShareLink,
  deleteShareLink,
  listShareLinks,
} from '../../features/serving/index.ts';
import { projectContext } from '../context.ts';
import type { Ctx, Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { protectionContinuePage } from '../pages/protection-continue.ts';
import { protectionPage } from '../pages/protection.ts';

const projectIdOf = (req: FastifyRequest) => (req.params as { projectId: string }).projectId;

/**
 * Preview protection on the dashboard (docs/protection.md): the sign-in a protected page sends its
 * visitors to, and the project's Protection tab (the setting, the bypass secret, share links).
 */
export function protectionRoutes(scope: FastifyInstance, kit: Kit): void {
  protectionSignInRoutes(scope, kit);
  protectionTabRoutes(scope, kit);
}

/** The sign-in a protected page sends its visitors to. */
function protectionSignInRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  const resolver = freshResolver(deps);
  // The edge sends a visitor without its cookie here with the page's address; once signed in
  // (kit.page sends them through the sign-in and back), a member of the project's organization
  // goes on to the page's host with a one-time code, which the edge trades for a cookie of that
  // host alone. Anyone else gets a page why not.
  scope.get(
    '/protection/sign-in',
    kit.page(async ({ req, view, session }) => {
      const { url } = req.query as { url?: string };
      // The page's own origin, checked to be a protected host of the member's project.
      const location = await issueProtectionCode(deps, resolver, session.actor, url);
      return protectionContinuePage(view, new URL(location).host, location);
    }),
  );
}

/** The project's Protection tab: the setting, the bypass secret and share links. */
function protectionTabRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  const tab = async (
    view: View,
    actor: Actor,
    projectId: string,
    state: Parameters<typeof protectionPage>[2] = {},
  ) => {
    const ctx = await projectContext(deps, actor, projectId);
    const { items } = await listShareLinks(deps, actor, ctx.project.id, { page: 1, limit: 100 });
    return protectionPage(view, { ...ctx, links: items, now: deps.clock.now() }, state);
  };
  /** Runs a form's change and answers the tab with what it made, or its refusal in words. */
  const answer = async (ctx: Ctx, change: () => Promise<Parameters<typeof protectionPage>[2]>) => {
    const projectId = projectIdOf(ctx.req);
    try {
      const state = await change();
      // Not a redirect: a secret or link made here is shown on this answer only (no-store).
      return kit.send(ctx.reply, await tab(ctx.view, ctx.session.actor, projectId, state));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const page = await tab(ctx.view, ctx.session.actor, projectId, { error: err.message });
      return kit.send(ctx.reply, page, err.status);
    }
  };

  scope.get(
    '/projects/:projectId/protection',
    kit.page(async ({ req, view, session }) => tab(view, session.actor, projectIdOf(req))),
  );
  scope.post(
    '/projects/:projectId/protection',
    kit.page(async (ctx) =>
      answer(ctx, async () => {
        const body = parseOrThrow(UpdateProjectBody, { protection: ctx.form.protection }, 'body');
        await updateProject(deps, ctx.session.actor, projectIdOf(ctx.req), body);
        return { message: 'Saved: it applies at once.' };
      }),
    ),
  );
  scope.post(
    '/projects/:projectId/protection/bypass',
    kit.page(async (ctx) =>
      answer(ctx, async () => ({
        secret: (await rotateBypassSecret(deps, ctx.session.actor, projectIdOf(ctx.req))).secret,
      })),
    ),
  );
  scope.post(
    '/projects/:projectId/protection/links',
    kit.page(async (ctx) =>
      answer(ctx, async () => {
        const body = parseOrThrow(
          CreateShareLinkBody,
          { deploymentId: ctx.form.deploymentId, expiresInHours: Number(ctx.form.hours) },
          'body',
        );
        return { link: await createShareLink(deps, ctx.session.actor, projectIdOf(ctx.req), body) };
      }),
    ),
  );
  // Revoking a link ends the cookies it set too (the edges drop the project's routes, links included).
  scope.post(
    '/projects/:projectId/protection/links/:linkId/revoke',
    kit.page(async (ctx) =>
      answer(ctx, async () => {
        const { linkId } = ctx.req.params as { linkId: string };
        await deleteShareLink(deps, ctx.session.actor, projectIdOf(ctx.req), linkId);
        return { message: `Share link ${linkId} revoked: it and the cookies it set open nothing now.` };
      }),
    ),
  );
}
