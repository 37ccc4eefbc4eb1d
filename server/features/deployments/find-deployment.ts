import { ApiError } from '../../../api/errors.ts';
import type { Role } from '../../../api/schemas/organizations.ts';
import { requireRole } from '../identity/index.ts';
import type { ProjectRow } from '../../platform/deps/project-with-role.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import type { DeploymentRow } from './to-deployment.ts';

/**
 * Loads a deployment through its project: a deployment of a deleted project, or of an
 * organization the caller is not a member of, is NOT_FOUND; a role below `min` is FORBIDDEN.
 */
export async function requireDeployment(
  deps: Deps,
  actor: Actor,
  deploymentId: string,
  min: Role = 'viewer',
): Promise<{ deployment: DeploymentRow; project: ProjectRow }> {
  const what = `Deployment ${deploymentId}`;
  const deployment = await deps.db
    .selectFrom('deployments')
    .selectAll()
    .where('id', '=', deploymentId)
    .executeTakeFirst();
  if (!deployment) throw ApiError.notFound(what);
  const project = await deps.db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', deployment.project_id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!project) throw ApiError.notFound(what);
  await requireRole(deps, actor, project.organization_id, min, what);
  return { deployment, project };
}

/** Deploying into a suspended project is refused; reading it is not. */
export function assertDeployable(project: ProjectRow): void {
  if (project.status === 'suspended') {
    throw ApiError.forbidden(
      `Project ${project.name} is suspended and cannot be deployed; resume it with \`slipway project resume ${project.name}\``,
    );
  }
}
