import type { Kysely, Migration } from 'kysely';

/**
 * Branch URLs (docs/edge.md#branch-urls): one row per branch of a project that has had a preview,
 * its host label and the newest of its previews that went live. The label is unique across the
 * aliases (the index); features/deployments/branch-alias.ts also keeps it clear of production and
 * deployment hosts. `deployments.branch_host` copies the label onto each preview, so that the
 * API shows a deployment's branch URL without a join. `previews` counts the previews queued for
 * the branch and `deployments.branch_seq` numbers each: the alias only moves to a higher number
 * (`deployment_seq`), so an older preview going live last does not take it back, whatever the
 * timestamps (two in one millisecond).
 */
export const branchAliases: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('branch_aliases')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('branch', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('deployment_id', 'text')
      .addColumn('deployment_seq', 'integer')
      .addColumn('previews', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('branch_aliases_pkey', ['project_id', 'branch'])
      .execute();
    await db.schema.createIndex('branch_aliases_host').on('branch_aliases').column('host').unique().execute();
    await db.schema.alterTable('deployments').addColumn('branch_host', 'text').execute();
    await db.schema.alterTable('deployments').addColumn('branch_seq', 'integer').execute();
  },
};
