import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The prepaid ledger of the paid API and the Idempotency-Key store.
 *
 * `ledger_entries` is append-only: a balance is the sum of an organization's entries, so money
 * is never kept in a column that two writers could both update. A used challenge id is unique,
 * which makes a replayed credential fail at the database even when two requests race.
 */
export const payments: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ledger_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('amount_cents', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('method', 'text')
      .addColumn('reference', 'text')
      .addColumn('operation', 'text')
      .addColumn('challenge_id', 'text', (c) => c.unique())
      .addColumn('user_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addCheckConstraint(
        'ledger_entries_sign',
        sql`(kind = 'topup' and amount_cents > 0) or (kind = 'charge' and amount_cents < 0)`,
      )
      .execute();
    await db.schema
      .createIndex('ledger_entries_org_created')
      .on('ledger_entries')
      .columns(['organization_id', 'kind', 'created_at'])
      .execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('response_body', 'text')
      .addColumn('response_headers', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
      .execute();
  },
};
