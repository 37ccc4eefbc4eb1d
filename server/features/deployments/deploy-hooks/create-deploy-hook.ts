import { ApiError } from '../../../../api/errors.ts';
import type { CreateDeployHookBody, CreatedDeployHook } from '../../../../api/schemas/deploy-hooks.ts';
import { newId } from '../../../core/ids.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { hashHookSecret, hookUrlPrefix, newHookSecret } from './hook-secret.ts';
import { toDeployHook } from './to-deploy-hook.ts';

/**
 * Makes a deploy hook (admin and up: like a token, it lets whoever holds its URL deploy, and it
 * outlives the maker's membership). Only the secret's SHA-256 is stored; the answer carries the
 * whole URL this once.
 */
export async function createDeployHook(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: CreateDeployHookBody,
): Promise<CreatedDeployHook> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const secret = newHookSecret();
  const row = {
    id: newId('dph'),
    project_id: project.id,
    name: body.name,
    branch: body.branch,
    secret_hash: hashHookSecret(secret),
    created_by: actor.userId,
    created_at: deps.clock.now().toISOString(),
    last_used_at: null,
    last_deployment_id: null,
  };
  try {
    await deps.db.insertInto('deploy_hooks').values(row).execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw ApiError.conflict(
      `Project ${project.name} already has a deploy hook named "${body.name}"; choose another name, or revoke that one first`,
    );
  }
  return {
    ...toDeployHook(deps.urls, row, actor.email),
    url: `${hookUrlPrefix(deps.urls.api, row.id)}${secret}`,
  };
}
