import type { z } from 'zod';
import { projects } from '../routes/projects.ts';
import type { CreateProjectBody, UpdateProjectBody } from '../schemas/projects.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { ProjectsQueryInput } from './inputs.ts';

/** Projects: `/v1/projects` (the routes: api/routes/projects.ts). */
export function projectsApi(c: Caller) {
  return {
    /** One page of projects, newest first; `org` takes an organization id or name. */
    list: (query: ProjectsQueryInput = {}, o?: CallOptions) => c.call(projects.list, {}, { ...o, query }),
    /** Creates a project (201); the framework is detected when omitted. */
    create: (body: z.input<typeof CreateProjectBody>, o?: CallOptions) =>
      c.call(projects.create, {}, { ...o, body }),
    get: (projectId: string, o?: CallOptions) => c.call(projects.get, { projectId }, o),
    /** Changes name, branch, framework, repository URL or build settings (null returns one to detection). */
    update: (projectId: string, body: z.input<typeof UpdateProjectBody>, o?: CallOptions) =>
      c.call(projects.update, { projectId }, { ...o, body }),
    /** Soft delete: the project stops serving and releases its domains. */
    delete: (projectId: string, o?: CallOptions) => c.call(projects.delete, { projectId }, o),
  };
}
