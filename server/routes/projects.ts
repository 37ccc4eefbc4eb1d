import { z } from 'zod';
import {
  CreateProjectBody,
  ListProjectsQuery,
  Project,
  UpdateProjectBody,
} from '../../api/schemas/projects.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createProject } from '../services/projects/create-project.ts';
import { deleteProject } from '../services/projects/delete-project.ts';
import { getProject } from '../services/projects/get-project.ts';
import { listProjects } from '../services/projects/list-projects.ts';
import { updateProject } from '../services/projects/update-project.ts';

const ProjectParams = z.object({ projectId: z.string() });

export const projectRoutes = [
  route({
    method: 'GET',
    url: '/v1/projects',
    tag: 'projects',
    summary: 'List projects (newest first); filter by org (id or name) and status',
    query: ListProjectsQuery,
    response: Project,
    responseKind: 'list',
    handler: async ({ deps, actor, query }) => {
      const page = await listProjects(deps, actor, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/projects',
    tag: 'projects',
    summary: 'Create a project',
    body: CreateProjectBody,
    response: Project,
    successStatus: 201,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await createProject(deps, actor, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId',
    scoped: 'read',
    tag: 'projects',
    summary: 'Get a project',
    params: ProjectParams,
    response: Project,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getProject(deps, actor, params.projectId),
    }),
  }),
  route({
    method: 'PATCH',
    url: '/v1/projects/:projectId',
    tag: 'projects',
    summary: 'Update a project (name, branch, framework, repository, build settings)',
    params: ProjectParams,
    body: UpdateProjectBody,
    response: Project,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await updateProject(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId',
    tag: 'projects',
    summary: 'Delete a project (soft: it stops serving and releases its domains)',
    params: ProjectParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await deleteProject(deps, actor, params.projectId);
      return { kind: 'deleted', message: `Project ${params.projectId} deleted` };
    },
  }),
];
