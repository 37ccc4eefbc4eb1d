import type { Kysely, Migration } from 'kysely';

/**
 * The delivery worker asks for pending deliveries whose `next_attempt_at` has come, several
 * times a second when busy; without this index that is a scan of every delivery ever made.
 */
export const webhookDeliveriesDue: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['status', 'next_attempt_at'])
      .execute();
  },
};
