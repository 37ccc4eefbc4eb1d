import type { FastifyInstance } from 'fastify';
import { InviteMemberBody, UpdateMemberBody } from '../../../api/schemas/organizations.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import {
  getOrganization,
  inviteMember,
  listMembers,
  listOrganizations,
  removeMember,
  updateMember,
} from '../../features/identity/index.ts';
import { ApiError } from '../../../api/errors.ts';
import { PageQuery } from '../../../api/schemas/common.ts';
import { listProjects } from '../../features/deployments/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { submit, type Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { withLatest } from '../latest.ts';
import { homePage } from '../pages/home.ts';
import { organizationPage } from '../pages/organization.ts';

const PAGE = 50;

/** The home page (organizations and their projects) and an organization's page with its members. */
export function organizationRoutes(scope: FastifyInstance, kit: Kit): void {
  homeRoute(scope, kit);
  organizationPageRoute(scope, kit);
  inviteRoute(scope, kit);
  memberRoute(scope, kit);
}

/** The home page: the caller's organizations, each with its first projects and their newest deployments. */
function homeRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.get(
    '/',
    kit.page(async ({ view, session }) => {
      const { items: orgs } = await listOrganizations(deps, session.actor, { page: 1, limit: 100 });
      const withProjects = await Promise.all(
        orgs.map(async (org) => {
          const { items, total } = await listProjects(deps, session.actor, {
            org: org.id,
            page: 1,
            limit: 12,
          });
          return { org, projects: await withLatest(deps, session.actor, items), total: total ?? 0 };
        }),
      );
      return homePage(view, withProjects, deps.clock.now());
    }),
  );
}

/** An organization's page: a page of its projects (from `cursor`) and its members. */
async function renderOrganization(
  deps: Deps,
  view: View,
  actor: Actor,
  name: string,
  cursor: string | undefined,
  state: { error?: string; typed?: Record<string, string>; message?: string } = {},
) {
  const org = await getOrganization(deps, actor, name);
  // A cursor that is not one of this list's reads as the first page.
  const projectsFrom = (from: string | undefined) =>
    listProjects(deps, actor, { org: org.id, page: 1, limit: PAGE, ...(from ? { cursor: from } : {}) });
  const [projects, members] = await Promise.all([
    projectsFrom(cursor).catch((err: unknown) => {
      if (!(err instanceof ApiError) || !cursor) throw err;
      cursor = undefined;
      return projectsFrom(undefined);
    }),
    listMembers(deps, actor, org.id, { page: 1, limit: 100 }),
  ]);
  return organizationPage(
    view,
    {
      org,
      projects: { items: projects.items, next: projects.next, cursor },
      members: members.items,
      now: deps.clock.now(),
    },
    state,
  );
}

/** The organization's page, with a notice of what was just done. */
function organizationPageRoute(scope: FastifyInstance, kit: Kit): void {
  scope.get(
    '/orgs/:org',
    kit.page(async ({ req, view, session }) => {
      const { org } = req.params as { org: string };
      const q = req.query as { cursor?: string; done?: string };
      const cursor = PageQuery.safeParse({ cursor: q.cursor }).data?.cursor;
      const message =
        q.done === 'invited'
          ? 'Invited.'
          : q.done === 'role'
            ? 'Role changed.'
            : q.done === 'removed'
              ? 'Member removed.'
              : undefined;
      return renderOrganization(kit.deps, view, session.actor, org, cursor, message ? { message } : {});
    }),
  );
}

/** The Invite form. */
function inviteRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.post(
    '/orgs/:org/members',
    kit.page(async (ctx) => {
      const { org } = ctx.req.params as { org: string };
      const { email, role } = ctx.form;
      return submit(
        kit,
        ctx,
        () =>
          inviteMember(deps, ctx.session.actor, org, parseOrThrow(InviteMemberBody, { email, role }, 'body')),
        `/orgs/${org}?done=invited`,
        (error) =>
          renderOrganization(deps, ctx.view, ctx.session.actor, org, undefined, { error, typed: ctx.form }),
      );
    }),
  );
}

/** A member's forms: change the role, or remove (`op=remove`). */
function memberRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.post(
    '/orgs/:org/members/:email',
    kit.page(async (ctx) => {
      const { org, email } = ctx.req.params as { org: string; email: string };
      const remove = ctx.form.op === 'remove';
      return submit(
        kit,
        ctx,
        () =>
          remove
            ? removeMember(deps, ctx.session.actor, org, email)
            : updateMember(
                deps,
                ctx.session.actor,
                org,
                email,
                parseOrThrow(UpdateMemberBody, { role: ctx.form.role }, 'body'),
              ),
        `/orgs/${org}?done=${remove ? 'removed' : 'role'}`,
        (error) => renderOrganization(deps, ctx.view, ctx.session.actor, org, undefined, { error }),
      );
    }),
  );
}
