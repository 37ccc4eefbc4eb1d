import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';

/** Soft delete: the project stops serving, its domains and branch URLs are released, reads answer 404. */
export async function deleteProject(deps: Deps, actor: Actor, projectId: string): Promise<void> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('projects')
      .set({ status: 'deleted', deleted_at: now, updated_at: now })
      .where('id', '=', project.id)
      .execute();
    await tx.deleteFrom('domains').where('project_id', '=', project.id).execute();
    // Its branch URLs stop answering and their labels are free again.
    await tx.deleteFrom('branch_aliases').where('project_id', '=', project.id).execute();
  });
  signalRoutingChange(deps, project.id);
}
