import type { Kysely, Migration } from 'kysely';

/**
 * On PostgreSQL one statement counts a batch of a user's requests (server/platform/deps/rate-counts/rate-counts-batched.ts)
 * and must say how many of them fit under the limit: the new count minus the old, which only
 * the SET list sees (RETURNING has no OLD before PostgreSQL 18), so the statement keeps it here.
 */
export const rateLimitGranted: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('rate_limits')
      .addColumn('granted', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
