import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Preview protection (docs/protection.md). `projects.protection` is `none`, `previews` or `all`.
 * Projects that exist when this runs keep `none`: their previews were public until now, and links
 * already shared (a pull request's comment, a CMS's preview button) must not start asking for a
 * sign-in behind their owners' backs. Projects created from now on get `previews`, as Vercel does
 * (features/deployments/projects/create-project.ts). The bypass secret is kept as its SHA-256 only.
 * `protection_codes` are the one-time codes the dashboard hands the edge after a sign-in (single
 * use, a minute long, bound to one host); `protection_links` are expiring share links.
 */
export const previewProtection: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('projects')
      .addColumn('protection', 'text', (c) => c.notNull().defaultTo(sql.lit('none')))
      .execute();
    await db.schema.alterTable('projects').addColumn('protection_bypass_hash', 'text').execute();
    await db.schema.alterTable('projects').addColumn('protection_bypass_created_at', 'text').execute();
    await db.schema
      .createTable('protection_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema
      .createTable('protection_links')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('protection_links_project_created')
      .on('protection_links')
      .columns(['project_id', 'created_at', 'id'])
      .execute();
  },
};
