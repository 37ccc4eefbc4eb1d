import { roleIn, getOrganization } from '../features/identity/index.ts';
import type { Actor, Deps } from '../platform/deps/deps.ts';
import { getProject } from '../features/deployments/index.ts';
import type { ProjectContext } from './pages/project-shell.ts';

/** A project as its pages show it: the project (read through the API's access check), its organization's name, the caller's role. */
export async function projectContext(deps: Deps, actor: Actor, projectId: string): Promise<ProjectContext> {
  const project = await getProject(deps, actor, projectId);
  const [org, role] = await Promise.all([
    getOrganization(deps, actor, project.organizationId),
    roleIn(deps, actor, project.organizationId),
  ]);
  return { project, orgName: org.name, role: role ?? 'viewer' };
}
