import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { CreateProjectBody } from '../../../api/schemas/projects.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import { roleAtLeast, listOrganizations } from '../../features/identity/index.ts';
import { createDeployment, createProject } from '../../features/deployments/index.ts';
import type { Actor } from '../../platform/deps/deps.ts';
import type { Kit } from '../kit.ts';
import type { View } from '../layout.ts';
import { newProjectPage, type NewProjectState } from '../pages/new-project.ts';

/** The form's fields as the API's create body: an empty project has no repository. */
export function projectBody(f: Record<string, string>): CreateProjectBody {
  const fromGit = f.source !== 'upload';
  if (fromGit && !f.repositoryUrl?.trim()) {
    throw ApiError.validation([
      {
        path: 'repositoryUrl',
        message: 'is required for a project built from a repository; choose "Empty" to deploy uploaded files',
      },
    ]);
  }
  return parseOrThrow(
    CreateProjectBody,
    {
      name: f.name ?? '',
      organizationId: f.organizationId ?? '',
      ...(fromGit ? { repositoryUrl: f.repositoryUrl!.trim() } : {}),
      ...(f.branch?.trim() ? { branch: f.branch.trim() } : {}),
    },
    'body',
  );
}

/** "New project": a form, then the API's create (and, from a repository, its first deployment). */
export function newProjectRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;

  const render = async (view: View, actor: Actor, state: NewProjectState) => {
    const { items } = await listOrganizations(deps, actor, { page: 1, limit: 100 });
    return newProjectPage(
      view,
      items.filter((o) => roleAtLeast(o.role, 'developer')),
      state,
    );
  };

  scope.get(
    '/new',
    kit.page(async ({ req, view, session }) => {
      const org = (req.query as { org?: string }).org;
      return render(view, session.actor, org ? { typed: { org } } : {});
    }),
  );

  scope.post(
    '/new',
    kit.page(async (ctx) => {
      const { actor } = ctx.session;
      let project;
      try {
        project = await createProject(deps, actor, projectBody(ctx.form));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        const page = await render(ctx.view, actor, { error: err.message, typed: ctx.form });
        return kit.send(ctx.reply, page, err.status);
      }
      if (project.repositoryUrl && ctx.form.deploy === 'on') {
        // As Vercel and Netlify do on import: the production branch builds at once, and its page
        // follows the build.
        try {
          const first = await createDeployment(deps, actor, project.id, {});
          return kit.redirect(ctx.reply, `/deployments/${first.id}?done=created`);
        } catch (err) {
          // The project exists: its page has the Deploy form, which says what the API refuses.
          if (!(err instanceof ApiError)) throw err;
        }
      }
      return kit.redirect(ctx.reply, `/projects/${project.id}?done=created`);
    }),
  );
}
