import { sql, type Kysely, type Migration } from 'kysely';

/** The index's predicate, written literally so both databases can match the rule's query to it. */
const FAILED_PRODUCTION = sql<boolean>`status = 'failed' and target = 'production'`;

/**
 * The `deployment_failed` rule asks every run which projects had a production deployment fail in
 * the last 24 hours: a range on updated_at over a partial index of failed production deployments,
 * flat however many deployments there are (docs/performance.md#data-growth). Each such project's
 * latest failure is then read through deployments_list_status (project, status).
 */
export const monitoringIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('deployments_failed_production')
      .on('deployments')
      .columns(['updated_at', 'project_id'])
      .where(FAILED_PRODUCTION)
      .execute();
  },
};
