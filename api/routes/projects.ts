import { CreateProjectBody, ListProjectsQuery, Project, UpdateProjectBody } from '../schemas/projects.ts';
import { contract } from './contract.ts';
import { ProjectParams } from './params.ts';

/** Projects: `/v1/projects`. */
export const projects = {
  list: contract({
    method: 'GET',
    url: '/v1/projects',
    tag: 'projects',
    summary: 'List projects (newest first); filter by org (id or name) and status',
    query: ListProjectsQuery,
    response: Project,
    responseKind: 'list',
  }),
  create: contract({
    method: 'POST',
    url: '/v1/projects',
    tag: 'projects',
    summary: 'Create a project',
    body: CreateProjectBody,
    response: Project,
    successStatus: 201,
  }),
  get: contract({
    method: 'GET',
    url: '/v1/projects/:projectId',
    tag: 'projects',
    summary: 'Get a project',
    params: ProjectParams,
    response: Project,
  }),
  update: contract({
    method: 'PATCH',
    url: '/v1/projects/:projectId',
    tag: 'projects',
    summary: 'Update a project (name, branch, framework, repository, build settings)',
    params: ProjectParams,
    body: UpdateProjectBody,
    response: Project,
  }),
  delete: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId',
    tag: 'projects',
    summary: 'Delete a project (soft: it stops serving and releases its domains)',
    params: ProjectParams,
    responseKind: 'deleted',
  }),
};
