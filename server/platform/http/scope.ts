import { ApiError } from '../../../api/errors.ts';
import type { Actor, Deps } from '../deps/deps.ts';

/** What a route lets a token from a GitHub Actions trust policy do: `read` (viewer) or `write` (developer). */
export type ScopedAccess = 'read' | 'write';

/**
 * A token exchanged for a workflow's OIDC token works on its one project and only through the
 * routes a deployment needs (`scoped` in the route table); everything else (tokens, members,
 * other projects) is refused, whatever its user could do otherwise.
 */
export async function checkScope(
  deps: Pick<Deps, 'db'>,
  scope: NonNullable<Actor['scope']>,
  route: { method: string; url: string; scoped?: ScopedAccess | undefined },
  params: unknown,
): Promise<void> {
  if (!route.scoped) {
    throw ApiError.forbidden(
      `A token from a GitHub Actions trust policy works only for deploying project ${scope.projectId}: ${route.method} ${route.url} is not open to it`,
    );
  }
  if (route.scoped === 'write' && scope.role === 'viewer') {
    throw ApiError.forbidden(
      `This token's trust policy gives the role viewer: it may read project ${scope.projectId}, not change it`,
    );
  }
  const p = (params ?? {}) as { projectId?: string; deploymentId?: string };
  if (p.projectId !== undefined && p.projectId !== scope.projectId)
    throw ApiError.notFound(`Project ${p.projectId}`);
  if (p.deploymentId !== undefined) {
    const row = await deps.db
      .selectFrom('deployments')
      .select('project_id')
      .where('id', '=', p.deploymentId)
      .executeTakeFirst();
    if (row?.project_id !== scope.projectId) throw ApiError.notFound(`Deployment ${p.deploymentId}`);
  }
}
