import type { Deployment } from '../../../api/schemas/deployments.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { requireDeployment } from './find-deployment.ts';
import { toDeployment } from './to-deployment.ts';

/** One deployment, for any member of its project's organization. */
export async function getDeployment(deps: Deps, actor: Actor, deploymentId: string): Promise<Deployment> {
  const { deployment, project } = await requireDeployment(deps, actor, deploymentId, 'viewer');
  return toDeployment(deps.urls, deployment, project);
}
