import type { z } from 'zod';
import { type CreateProjectBody, Project, type UpdateProjectBody } from '../schemas/projects.ts';
import { type Caller, seg } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { ProjectsQueryInput } from './inputs.ts';

/** Projects: `/v1/projects`. */
export function projectsApi(c: Caller) {
  return {
    /** One page of projects, newest first; `org` takes an organization id or name. */
    list: (query: ProjectsQueryInput = {}, o?: CallOptions) =>
      c.list(Project, '/v1/projects', { ...o, query }),
    /** Creates a project (201); the framework is detected when omitted. */
    create: (body: z.input<typeof CreateProjectBody>, o?: CallOptions) =>
      c.data(Project, 'POST', '/v1/projects', { ...o, body }),
    get: (projectId: string, o?: CallOptions) => c.data(Project, 'GET', `/v1/projects/${seg(projectId)}`, o),
    /** Changes name, branch, framework, repository URL or build settings (null returns one to detection). */
    update: (projectId: string, body: z.input<typeof UpdateProjectBody>, o?: CallOptions) =>
      c.data(Project, 'PATCH', `/v1/projects/${seg(projectId)}`, { ...o, body }),
    /** Soft delete: the project stops serving and releases its domains. */
    delete: (projectId: string, o?: CallOptions) => c.deleted(`/v1/projects/${seg(projectId)}`, o),
  };
}
