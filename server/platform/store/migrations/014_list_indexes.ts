import { sql, type Kysely, type Migration } from 'kysely';

/** [name, table, columns] of the indexes every list reads in order (newest first, ties by id). */
const LIST_INDEXES: [string, string, string[]][] = [
  ['deployments_list', 'deployments', ['project_id', 'created_at', 'id']],
  ['deployments_list_status', 'deployments', ['project_id', 'status', 'created_at', 'id']],
  ['deployments_list_target', 'deployments', ['project_id', 'target', 'created_at', 'id']],
  ['deployments_list_branch', 'deployments', ['project_id', 'branch', 'created_at', 'id']],
  // `commitHash` filters by prefix: a range on this index, then a sort of the few matches.
  ['deployments_commit', 'deployments', ['project_id', 'commit_hash']],
  ['projects_list', 'projects', ['organization_id', 'created_at', 'id']],
  ['projects_list_status', 'projects', ['organization_id', 'status', 'created_at', 'id']],
  ['domains_list', 'domains', ['project_id', 'created_at', 'id']],
  ['webhooks_list', 'webhooks', ['project_id', 'created_at', 'id']],
  ['webhook_deliveries_list', 'webhook_deliveries', ['webhook_id', 'created_at', 'id']],
  ['alerts_list', 'alerts', ['project_id', 'created_at', 'id']],
  ['alerts_list_status', 'alerts', ['project_id', 'status', 'created_at', 'id']],
  ['env_vars_list', 'env_vars', ['project_id', 'created_at', 'id']],
  ['env_vars_list_environment', 'env_vars', ['project_id', 'environment', 'created_at', 'id']],
  ['tokens_list', 'tokens', ['user_id', 'created_at', 'id']],
  ['memberships_list', 'memberships', ['organization_id', 'invited_at', 'id']],
  ['ledger_entries_list', 'ledger_entries', ['organization_id', 'kind', 'created_at', 'id']],
];

/** Indexes the ones above make redundant (a prefix of theirs, or replaced). */
const REPLACED = [
  'deployments_project_created',
  'projects_org_created',
  'domains_project',
  'webhooks_project',
  'webhook_deliveries_webhook',
  'alerts_project',
  'tokens_user',
  'ledger_entries_org_created',
  'jobs_claim',
];

/**
 * Costs that stay flat as data grows (docs/performance.md#data-growth): every list's order and
 * filters come from one index, so a page by cursor reads only its rows; a job claim reads the
 * open jobs only, however many finished ones there are; finished jobs are pruned by age.
 */
export const listIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    for (const [name, table, columns] of LIST_INDEXES) {
      await db.schema.createIndex(name).on(table).columns(columns).execute();
    }
    // The claim and the pending-job lookups say `status in ('queued', 'running')` literally, so
    // both databases match this partial index (a bound parameter would not prove the predicate).
    await db.schema
      .createIndex('jobs_open')
      .on('jobs')
      .columns(['run_at'])
      .where(sql.ref('status'), 'in', sql`('queued', 'running')`)
      .execute();
    await db.schema
      .createIndex('jobs_finished')
      .on('jobs')
      .columns(['updated_at'])
      .where(sql.ref('status'), 'in', sql`('done', 'failed')`)
      .execute();
    for (const name of REPLACED) await db.schema.dropIndex(name).ifExists().execute();
  },
};
