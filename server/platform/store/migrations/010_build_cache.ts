import { sql, type Kysely, type Migration } from 'kysely';

/** `"cache": false` on a deployment: its build neither restores nor saves the build cache. */
export const buildCache: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('deployments')
      .addColumn('use_cache', 'integer', (c) => c.notNull().defaultTo(sql.lit(1)))
      .execute();
  },
};
