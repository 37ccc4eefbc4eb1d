import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { AddDomainBody } from '../../../api/schemas/domains.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import type { Actor } from '../../platform/deps/deps.ts';
import { addDomain, deleteDomain, listDomains, verifyDomain } from '../../features/serving/index.ts';
import { projectContext } from '../context.ts';
import { submit, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { domainsPage } from '../pages/domains.ts';
import { doneMessage, params } from './project-tab.ts';

/** Domains: a project's custom domains, added, verified and removed. */
export function projectDomainRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
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
}
