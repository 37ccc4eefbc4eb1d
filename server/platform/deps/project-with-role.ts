import type { Selectable } from 'kysely';
import type { Role } from '../../../api/schemas/organizations.ts';
import type { Store } from '../store/db.ts';
import { prepared } from '../store/prepared.ts';
import type { ProjectsTable } from '../store/schema.ts';

/**
 * Runs on nearly every request: built once per store, and on the embedded database answered
 * from memory until a project or membership changes (see server/platform/store/prepared.ts).
 */
const projectWithRole = prepared<[string, string], ProjectWithRole>(
  2,
  (d, userId, projectId) =>
    d
      .selectFrom('projects as p')
      .leftJoin('memberships as m', (join) =>
        join.onRef('m.organization_id', '=', 'p.organization_id').on('m.user_id', '=', userId),
      )
      .selectAll('p')
      .select('m.role as member_role')
      .where('p.id', '=', projectId)
      .where('p.deleted_at', 'is', null),
  { keepUntilChanged: ['projects', 'memberships'] },
);

export type ProjectRow = Selectable<ProjectsTable>;

/** A project's row with the caller's role in its organization (null: not a member). */
export type ProjectWithRole = ProjectRow & { member_role: Role | null };

/** A project that is not deleted, with the user's role in its organization; null when there is none. */
export async function readProjectWithRole(
  deps: { store: Pick<Store, 'run'> },
  userId: string,
  projectId: string,
): Promise<ProjectWithRole | null> {
  const [row] = await deps.store.run(projectWithRole, userId, projectId);
  return row ?? null;
}
