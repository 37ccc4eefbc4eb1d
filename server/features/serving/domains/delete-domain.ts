import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';
import { findDomain } from './find-domain.ts';

/** Removes a custom domain from a project; it stops serving and may be added again anywhere. */
export async function deleteDomain(
  deps: Deps,
  actor: Actor,
  projectId: string,
  host: string,
): Promise<string> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const row = await findDomain(deps, project.id, host);
  await deps.db.deleteFrom('domains').where('id', '=', row.id).execute();
  signalRoutingChange(deps, project.id);
  return row.domain;
}
