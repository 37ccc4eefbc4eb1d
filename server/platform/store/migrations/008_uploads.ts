import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Deploys from uploaded files. `uploaded_files` says which blobs each organization has sent (so
 * "which of these are missing" answers per organization and reveals nothing of others' files);
 * a deployment's `source` is `git` (cloned), `upload` (files to build) or `prebuilt` (files to
 * serve as they are), and `source_files` the JSON list of `{ path, sha256, size, mode }`.
 */
export const uploads: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('uploaded_files')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('uploaded_files_pk', ['organization_id', 'sha256'])
      .execute();
    await db.schema
      .createIndex('uploaded_files_last_used')
      .on('uploaded_files')
      .column('last_used_at')
      .execute();
    await db.schema
      .alterTable('deployments')
      .addColumn('source', 'text', (c) => c.notNull().defaultTo(sql.lit('git')))
      .execute();
    await db.schema.alterTable('deployments').addColumn('source_files', 'text').execute();
  },
};
