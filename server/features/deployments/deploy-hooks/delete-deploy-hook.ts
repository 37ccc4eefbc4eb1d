import { ApiError } from '../../../../api/errors.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';

/** Revokes a deploy hook (admin and up): its URL answers 404 from now on, like one that never was. */
export async function deleteDeployHook(
  deps: Deps,
  actor: Actor,
  projectId: string,
  hookId: string,
): Promise<void> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const res = await deps.db
    .deleteFrom('deploy_hooks')
    .where('id', '=', hookId)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw ApiError.notFound(`Deploy hook ${hookId}`);
}
