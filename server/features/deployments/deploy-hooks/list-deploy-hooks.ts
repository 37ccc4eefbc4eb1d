import type { PageQuery } from '../../../../api/schemas/common.ts';
import type { DeployHook } from '../../../../api/schemas/deploy-hooks.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import { toDeployHook } from './to-deploy-hook.ts';

/**
 * The project's deploy hooks, newest first (any member: every member reads everything of the
 * organization, and a list holds no secret, only each URL's part before it).
 */
export async function listDeployHooks(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: PageQuery,
): Promise<ListPage<DeployHook>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const base = deps.db.selectFrom('deploy_hooks').where('deploy_hooks.project_id', '=', project.id);
  const page = await readPage(
    base
      .innerJoin('users as u', 'u.id', 'deploy_hooks.created_by')
      .select([
        'deploy_hooks.id',
        'deploy_hooks.name',
        'deploy_hooks.branch',
        'deploy_hooks.created_at',
        'deploy_hooks.last_used_at',
        'u.email',
      ]),
    base,
    q,
    { time: 'deploy_hooks.created_at', id: 'deploy_hooks.id', key: (r) => [r.created_at, r.id] },
  );
  return { ...page, items: page.items.map((r) => toDeployHook(deps.urls, r, r.email)) };
}
