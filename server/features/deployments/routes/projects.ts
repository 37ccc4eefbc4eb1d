import { projects } from '../../../../api/routes/projects.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { createProject } from '../projects/create-project.ts';
import { deleteProject } from '../projects/delete-project.ts';
import { getProject } from '../projects/get-project.ts';
import { listProjects } from '../projects/list-projects.ts';
import { updateProject } from '../projects/update-project.ts';

export const projectRoutes = [
  route({
    ...projects.list,
    handler: async ({ deps, actor, query }) => {
      const page = await listProjects(deps, actor, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...projects.create,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await createProject(deps, actor, body),
    }),
  }),
  route({
    ...projects.get,
    scoped: 'read',
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getProject(deps, actor, params.projectId),
    }),
  }),
  route({
    ...projects.update,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await updateProject(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...projects.delete,
    handler: async ({ deps, actor, params }) => {
      await deleteProject(deps, actor, params.projectId);
      return { kind: 'deleted', message: `Project ${params.projectId} deleted` };
    },
  }),
];
