import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

/**
 * GitHub's deliveries to the GitHub App, stored so the App answers GitHub at once and processes
 * them afterwards, with retries, in order per `ordering_key`, across restarts (docs/bot.md). One
 * queue per user that stores events (`owner_user_id`).
 */
export const githubEvents = (d: DialectHelpers): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('github_events')
      // The order events were stored in: events of one ordering key are processed in this order.
      .addColumn('seq', d.autoIncrementType, d.autoIncrement)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('owner_user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('ordering_key', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().defaultTo(sql.lit('pending')))
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(sql.lit(0)))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('lease', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('last_error', 'text')
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addUniqueConstraint('github_events_delivery', ['owner_user_id', 'delivery_id'])
      .execute();
    await db.schema
      .createIndex('github_events_open')
      .on('github_events')
      .columns(['owner_user_id', 'status', 'ordering_key', 'seq'])
      .execute();
    await db.schema.createIndex('github_events_finished').on('github_events').column('finished_at').execute();
  },
});
