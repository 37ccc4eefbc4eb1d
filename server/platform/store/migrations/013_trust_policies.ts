import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Keyless deploys from GitHub Actions (docs/api/trust-policies.md): a project's trust policies, and
 * short-lived tokens made from a workflow's OIDC token, scoped to one project and role.
 */
export const trustPolicies: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('trust_policies')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('repository', 'text', (c) => c.notNull())
      .addColumn('repository_id', 'text', (c) => c.notNull())
      .addColumn('refs', 'text')
      .addColumn('environments', 'text')
      .addColumn('workflow', 'text')
      .addColumn('events', 'text')
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('trust_policies_project').on('trust_policies').column('project_id').execute();
    await db.schema
      .createIndex('trust_policies_repository')
      .on('trust_policies')
      .column('repository_id')
      .execute();
    await db.schema
      .alterTable('tokens')
      .addColumn('source', 'text', (c) => c.notNull().defaultTo(sql.lit('user')))
      .execute();
    await db.schema.alterTable('tokens').addColumn('project_id', 'text').execute();
    await db.schema.alterTable('tokens').addColumn('scope_role', 'text').execute();
    await db.schema.alterTable('tokens').addColumn('expires_at', 'text').execute();
  },
};
