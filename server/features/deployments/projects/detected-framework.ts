import type { Kysely } from 'kysely';
import type { Database, DeploymentsTable } from '../../../platform/store/schema.ts';

/**
 * Records what a build detected as its project's `detected_framework`, unless a newer deployment
 * of the project has detected one already (builds may finish out of order). The project's
 * `framework` setting is left alone: builds read only the setting, so a detection never pins
 * itself.
 */
export async function recordDetectedFramework(
  db: Kysely<Database>,
  deployment: Pick<DeploymentsTable, 'id' | 'project_id' | 'created_at'>,
  framework: string | null,
): Promise<void> {
  if (!framework) return;
  await db
    .updateTable('projects')
    .set({ detected_framework: framework })
    .where('id', '=', deployment.project_id)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('deployments as d')
            .select('d.id')
            .where('d.project_id', '=', deployment.project_id)
            .where('d.framework', 'is not', null)
            .where('d.id', '!=', deployment.id)
            .where('d.created_at', '>', deployment.created_at),
        ),
      ),
    )
    .execute();
}
