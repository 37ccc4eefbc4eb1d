import type { Project } from '../../../../api/schemas/projects.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { toProject } from './to-project.ts';

/** One project, for any member of its organization. */
export async function getProject(deps: Deps, actor: Actor, projectId: string): Promise<Project> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  return toProject(deps, project);
}
