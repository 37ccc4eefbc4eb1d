import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

export function initial(d: DialectHelpers): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('tokens_user').on('tokens').columns(['user_id', 'created_at']).execute();

      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('personal_user_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('memberships')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('invited_at', 'text', (c) => c.notNull())
        .addColumn('joined_at', 'text')
        .addUniqueConstraint('memberships_org_email', ['organization_id', 'email'])
        .execute();
      await db.schema.createIndex('memberships_user').on('memberships').column('user_id').execute();
      await db.schema.createIndex('memberships_email').on('memberships').column('email').execute();

      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('repository_url', 'text', (c) => c.notNull())
        .addColumn('branch', 'text', (c) => c.notNull())
        .addColumn('framework', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('production_host', 'text', (c) => c.notNull())
        .addColumn('production_deployment_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('deleted_at', 'text')
        .execute();
      // Names and production hosts are free again once a project is deleted.
      await db.schema
        .createIndex('projects_org_name')
        .on('projects')
        .columns(['organization_id', 'name'])
        .unique()
        .where(sql.ref('deleted_at'), 'is', null)
        .execute();
      await db.schema
        .createIndex('projects_production_host')
        .on('projects')
        .column('production_host')
        .unique()
        .where(sql.ref('deleted_at'), 'is', null)
        .execute();
      await db.schema
        .createIndex('projects_org_created')
        .on('projects')
        .columns(['organization_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('deployments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('branch', 'text', (c) => c.notNull())
        .addColumn('requested_commit', 'text')
        .addColumn('commit_hash', 'text')
        .addColumn('commit_message', 'text')
        .addColumn('message', 'text')
        .addColumn('author', 'text')
        .addColumn('host', 'text', (c) => c.notNull().unique())
        .addColumn('build_duration_ms', 'integer')
        .addColumn('deploy_duration_ms', 'integer')
        .addColumn('error_message', 'text')
        .addColumn('rollback_from', 'text')
        .addColumn('source_deployment_id', 'text')
        .addColumn('artifact_id', 'text')
        .addColumn('created_by', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('ready_at', 'text')
        .addColumn('promoted_at', 'text')
        .execute();
      await db.schema
        .createIndex('deployments_project_created')
        .on('deployments')
        .columns(['project_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('deployment_logs')
        .addColumn('id', d.autoIncrementType, d.autoIncrement)
        .addColumn('deployment_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('line', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('deployment_logs_deployment')
        .on('deployment_logs')
        .columns(['deployment_id', 'type', 'id'])
        .execute();

      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('run_at', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('lease_until', 'text')
        .addColumn('locked_by', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_claim').on('jobs').columns(['kind', 'status', 'run_at']).execute();

      await db.schema
        .createTable('domains')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('domain', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('ssl_status', 'text', (c) => c.notNull())
        .addColumn('ssl_error', 'text')
        .addColumn('verification_token', 'text', (c) => c.notNull())
        .addColumn('verified_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('domains_project').on('domains').column('project_id').execute();

      await db.schema
        .createTable('env_vars')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('value_ciphertext', 'text', (c) => c.notNull())
        .addColumn('encrypted', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('env_vars_key', ['project_id', 'key', 'environment'])
        .execute();

      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhooks_project').on('webhooks').column('project_id').execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempt_count', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_webhook')
        .on('webhook_deliveries')
        .columns(['webhook_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', d.autoIncrementType, d.autoIncrement)
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema
        .createIndex('webhook_attempts_delivery')
        .on('webhook_attempts')
        .column('delivery_id')
        .execute();

      await db.schema
        .createTable('rate_limits')
        .addColumn('token_id', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_limits_pk', ['token_id', 'window_start'])
        .execute();

      await db.schema
        .createTable('alerts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('resolved_at', 'text')
        .execute();
      await db.schema
        .createIndex('alerts_project')
        .on('alerts')
        .columns(['project_id', 'created_at'])
        .execute();
      // At most one active alert of a type per project.
      await db.schema
        .createIndex('alerts_one_active')
        .on('alerts')
        .columns(['project_id', 'type'])
        .unique()
        .where(sql.ref('status'), '=', 'active')
        .execute();

      await db.schema
        .createTable('health_checks')
        .addColumn('id', d.autoIncrementType, d.autoIncrement)
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('ok', 'integer', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_time_ms', 'integer')
        .addColumn('error', 'text')
        .execute();
      await db.schema
        .createIndex('health_checks_project')
        .on('health_checks')
        .columns(['project_id', 'at'])
        .execute();

      await db.schema
        .createTable('request_rollups')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull())
        .addColumn('success', 'integer', (c) => c.notNull())
        .addColumn('errors', 'integer', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('latency_sum_ms', 'bigint', (c) => c.notNull())
        .addColumn('latency_hist', 'text', (c) => c.notNull())
        .addColumn('status_counts', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('request_rollups_pk', ['project_id', 'minute'])
        .execute();
    },
  };
}
