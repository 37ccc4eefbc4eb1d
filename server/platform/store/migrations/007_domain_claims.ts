import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

/**
 * Domains become claims: several projects may hold a pending claim on one host name, and only
 * verifying makes it theirs. A verified host name is unique across the service (a partial
 * unique index, in SQLite and PostgreSQL alike); a project holds one claim per name.
 * SQLite cannot drop the old column UNIQUE constraint, so the table is rebuilt there.
 */
export function domainClaims(dialect: DialectHelpers): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect.name === 'sqlite') {
        await db.schema
          .createTable('domains_new')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
          .addColumn('domain', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('ssl_status', 'text', (c) => c.notNull())
          .addColumn('ssl_error', 'text')
          .addColumn('verification_token', 'text', (c) => c.notNull())
          .addColumn('verified_at', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        await sql`INSERT INTO domains_new SELECT id, project_id, domain, status, ssl_status, ssl_error,
          verification_token, verified_at, created_at, updated_at FROM domains`.execute(db);
        await db.schema.dropTable('domains').execute();
        await db.schema.alterTable('domains_new').renameTo('domains').execute();
        await db.schema.createIndex('domains_project').on('domains').column('project_id').execute();
      } else {
        await sql`ALTER TABLE domains DROP CONSTRAINT IF EXISTS domains_domain_key`.execute(db);
      }
      await db.schema
        .createIndex('domains_project_domain')
        .unique()
        .on('domains')
        .columns(['project_id', 'domain'])
        .execute();
      await db.schema
        .createIndex('domains_verified')
        .unique()
        .on('domains')
        .column('domain')
        .where(sql.ref('status'), '=', sql.lit('verified'))
        .execute();
      // Pending claims by age, for the expiry sweep.
      await db.schema
        .createIndex('domains_status_created')
        .on('domains')
        .columns(['status', 'created_at'])
        .execute();
    },
  };
}
