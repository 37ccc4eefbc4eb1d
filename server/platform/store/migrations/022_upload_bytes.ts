import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The bytes of uploads each organization keeps, as a running count beside the rows of
 * `uploaded_files`: an upload is accepted by one conditional update of this count
 * (server/features/uploads/upload-quota.ts), so two uploads at once cannot both pass the plan's
 * storage quota, and reading the usage costs one row. Organizations that uploaded before get the
 * sum of what they keep.
 */
export const uploadBytes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('organizations')
      .addColumn('upload_bytes', 'bigint', (c) => c.notNull().defaultTo(sql.lit(0)))
      .execute();
    await sql`
      update organizations set upload_bytes = coalesce(
        (select sum(u.size) from uploaded_files u where u.organization_id = organizations.id), 0)
    `.execute(db);
  },
};
