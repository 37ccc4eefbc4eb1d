import type { Kysely, Migration } from 'kysely';

/**
 * Sign-ins to the dashboard. A session is kept by the SHA-256 of its cookie's value (the value
 * itself is never stored); `token_id` is the API token it was opened with, so revoking that token
 * ends it. `csrf` is the value every form of the session must send back.
 */
export const dashboardSessions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('token_id', 'text', (c) => c.references('tokens.id'))
      .addColumn('csrf', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();
    await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();
  },
};
