import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

/** Keys per statement (well under SQLite's and PostgreSQL's bound parameters). */
const BATCH = 500;

/**
 * Called by a build before it looks for the blobs it is about to reference: takes them off the
 * collection's list (condemned_blobs), so no collection removes them after this returns. A
 * collection removing one at this moment holds its row: the delete here waits for it, and the
 * blob is then gone before the build looks, so the build writes it again. An empty list (the
 * usual case) costs one read.
 */
export async function rescueBlobs(db: Kysely<Database>, keys: readonly string[]): Promise<void> {
  const any = await db.selectFrom('condemned_blobs').select('key').limit(1).executeTakeFirst();
  if (!any) return;
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += BATCH) {
    await db
      .deleteFrom('condemned_blobs')
      .where('key', 'in', unique.slice(i, i + BATCH))
      .execute();
  }
}
