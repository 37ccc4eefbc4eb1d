import type { Deployment } from '../../api/schemas/deployments.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { listDeployments } from '../features/deployments/index.ts';
import type { Actor, Deps } from '../platform/deps/deps.ts';

/** Each project with its newest deployment (null before the first), read through the API's own list. */
export function withLatest(
  deps: Deps,
  actor: Actor,
  projects: Project[],
): Promise<{ project: Project; latest: Deployment | null }[]> {
  return Promise.all(
    projects.map(async (project) => {
      const { items } = await listDeployments(deps, actor, project.id, { page: 1, limit: 1 });
      return { project, latest: items[0] ?? null };
    }),
  );
}
