import { sql, type Kysely, type Migration } from 'kysely';

/** The predicate of both indexes, written literally so both databases can match a query to it. */
const FAILED_PRODUCTION = sql<boolean>`status = 'failed' and target = 'production'`;

/**
 * The `deployment_failed` rule reads failed production deployments only: which projects had one
 * recently (a range on updated_at) and each such project's latest. Partial indexes over those
 * rows keep both reads flat however many deployments there are (docs/performance.md#data-growth).
 */
export const monitoringIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('deployments_failed_production')
      .on('deployments')
      .columns(['updated_at', 'project_id'])
      .where(FAILED_PRODUCTION)
      .execute();
    await db.schema
      .createIndex('deployments_failed_production_project')
      .on('deployments')
      .columns(['project_id', 'updated_at'])
      .where(FAILED_PRODUCTION)
      .execute();
  },
};
