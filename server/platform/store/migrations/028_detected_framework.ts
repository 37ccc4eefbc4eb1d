import { sql, type Kysely, type Migration } from 'kysely';

/**
 * What the project's newest build detected, beside the user's setting (`framework`): the API's
 * `framework` reports the setting, else this (the seed's "auto-detected when omitted"), while
 * builds read only the setting, so a detection never pins itself. Projects built before get the
 * framework of their newest deployment that has one.
 */
export const detectedFramework: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('projects').addColumn('detected_framework', 'text').execute();
    await sql`
      update projects set detected_framework = (
        select d.framework from deployments d
        where d.project_id = projects.id and d.framework is not null
        order by d.created_at desc, d.id desc limit 1)
    `.execute(db);
  },
};
