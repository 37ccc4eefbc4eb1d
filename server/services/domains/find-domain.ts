import type { Kysely } from 'kysely';
import { ApiError } from '../../../api/errors.ts';
import type { Database } from '../../store/schema.ts';
import type { DomainRow } from './to-domain.ts';

/** The domain `host` of a project, or NOT_FOUND. Host names are stored lowercase. */
export async function findDomain(db: Kysely<Database>, projectId: string, host: string): Promise<DomainRow> {
  const row = await db
    .selectFrom('domains')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('domain', '=', host.toLowerCase())
    .executeTakeFirst();
  if (!row) throw ApiError.notFound(`Domain ${host} of project ${projectId}`);
  return row;
}
