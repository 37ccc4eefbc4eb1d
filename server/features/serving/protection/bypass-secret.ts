import { ApiError } from '../../../../api/errors.ts';
import type { CreatedProtectionBypass } from '../../../../api/schemas/protection.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';
import { BYPASS_PREFIX, newSecret, sha256 } from './protection-cookie.ts';

/**
 * Makes the project's protection bypass secret, replacing any earlier one (admin and up: it
 * opens every protected host of the project, like a member's sign-in). Only its SHA-256 is kept;
 * the answer carries the secret this once. The edges drop the project's cached routes, so the
 * old secret stops working at once.
 */
export async function rotateBypassSecret(
  deps: Deps,
  actor: Actor,
  projectId: string,
): Promise<CreatedProtectionBypass> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const secret = newSecret(BYPASS_PREFIX);
  const createdAt = deps.clock.now().toISOString();
  await deps.db
    .updateTable('projects')
    .set({ protection_bypass_hash: sha256(secret), protection_bypass_created_at: createdAt })
    .where('id', '=', project.id)
    .execute();
  signalRoutingChange(deps, project.id);
  return { secret, createdAt };
}

/** Removes the project's bypass secret (admin and up): the header opens nothing from now on. */
export async function deleteBypassSecret(deps: Deps, actor: Actor, projectId: string): Promise<void> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  if (project.protection_bypass_hash === null)
    throw ApiError.notFound(`Project ${project.name} has no protection bypass secret`);
  await deps.db
    .updateTable('projects')
    .set({ protection_bypass_hash: null, protection_bypass_created_at: null })
    .where('id', '=', project.id)
    .execute();
  signalRoutingChange(deps, project.id);
}
