import { ApiError } from '../../../../api/errors.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';

/** Suspend or resume (CLI). */
export async function setProjectStatus(
  deps: Deps,
  projectId: string,
  status: 'active' | 'suspended',
): Promise<void> {
  const rows = await deps.db
    .updateTable('projects')
    .set({ status, updated_at: deps.clock.now().toISOString() })
    .where((eb) => eb.or([eb('id', '=', projectId), eb('name', '=', projectId)]))
    .where('deleted_at', 'is', null)
    .returning('id')
    .execute();
  if (rows.length === 0) throw ApiError.notFound(`Project ${projectId}`);
  // A name may be the same in several organizations: each of them changed.
  for (const row of rows) signalRoutingChange(deps, row.id);
}
