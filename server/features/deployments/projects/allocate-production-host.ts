import type { Kysely } from 'kysely';
import { randomString } from '../../../core/ids.ts';
import type { Database } from '../../../platform/store/schema.ts';
import { isBranchHost } from '../branch-alias.ts';

/**
 * The production host label: the project's name when free across the service, else the name
 * with the organization's, else with a random suffix. Labels stay within DNS's 63 characters. A
 * branch URL's label counts as taken (docs/edge.md#branch-urls).
 */
export async function allocateProductionHost(
  db: Kysely<Database>,
  name: string,
  orgName: string,
  projectId?: string,
) {
  const candidates = [
    name,
    `${name}-${orgName}`.slice(0, 63).replace(/-+$/, ''),
    `${name.slice(0, 55)}-${randomString(7)}`,
  ];
  for (const host of candidates) {
    let q = db
      .selectFrom('projects')
      .select('id')
      .where('production_host', '=', host)
      .where('deleted_at', 'is', null);
    if (projectId) q = q.where('id', '!=', projectId);
    if (!(await q.executeTakeFirst()) && !(await isBranchHost(db, host))) return host;
  }
  return `${name.slice(0, 50)}-${randomString(12)}`;
}
