import type { SlipwayClient } from '../api/client/index.ts';
import { findProject } from '../api/client/find-project.ts';
import type { Project } from '../api/schemas/projects.ts';

/** Finds the project by id (`prj_...`) or by name, within `organization` when given. */
export const resolveProject = (
  client: Pick<SlipwayClient, 'projects' | 'iterate'>,
  project: string,
  organization: string | undefined,
): Promise<Project> =>
  findProject(client, project, organization, {
    who: "the api-token's user",
    orgHint: 'set the organization input',
  });
