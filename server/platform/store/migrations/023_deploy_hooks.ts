import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Deploy hooks (docs/api/deploy-hooks.md): a secret URL per project and branch that queues a build
 * of the branch's head. Only the SHA-256 of the secret is kept. Each hook counts its own requests
 * in a fixed one-hour window on its row (one conditional update: exact across every API process),
 * and remembers its last deployment, so a request while that one is still queued gets it back
 * instead of a second build.
 */
export const deployHooks: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('deploy_hooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('branch', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('last_deployment_id', 'text')
      .addColumn('window_start', 'bigint', (c) => c.notNull().defaultTo(sql.lit(0)))
      .addColumn('window_count', 'integer', (c) => c.notNull().defaultTo(sql.lit(0)))
      .execute();
    // Names tell a project's hooks apart: unique within the project.
    await db.schema
      .createIndex('deploy_hooks_project_name')
      .on('deploy_hooks')
      .columns(['project_id', 'name'])
      .unique()
      .execute();
    await db.schema
      .createIndex('deploy_hooks_project_created')
      .on('deploy_hooks')
      .columns(['project_id', 'created_at', 'id'])
      .execute();
  },
};
