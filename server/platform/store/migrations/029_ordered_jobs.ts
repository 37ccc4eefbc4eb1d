import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

/**
 * Step 1 of one durable queue (docs/architecture.md#plan-one-durable-queue): `jobs` can hold the
 * work that the GitHub App's events and webhook deliveries need.
 *
 * - `ordering_key`: one open job per key runs at a time, the oldest (lowest `seq`) first
 *   (server/platform/queue/queue.ts). Null for jobs with no order of their own.
 * - `seq`: the order within a key, set on insert for jobs with a key only. PostgreSQL takes it from
 *   the sequence `jobs_seq`; SQLite cannot add an autoincrement column, so it writes one more than
 *   the key's highest in the insert itself (SQLite runs one write at a time).
 * - `owner_user_id`: whose token may claim and finish the job through the API (the App's events).
 * - `dedupe_key`: a job with the key of one kept already is not stored again (unique where set).
 */
export const orderedJobs = (d: DialectHelpers): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('ordering_key', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('seq', 'bigint').execute();
    await db.schema.alterTable('jobs').addColumn('owner_user_id', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('dedupe_key', 'text').execute();
    if (d.name === 'postgres') await sql`create sequence jobs_seq`.execute(db);
    // The claim's "no older open job of this key" and SQLite's highest seq of a key.
    await db.schema
      .createIndex('jobs_ordering')
      .on('jobs')
      .columns(['ordering_key', 'seq'])
      .where(sql.ref('ordering_key'), 'is not', null)
      .execute();
    await db.schema
      .createIndex('jobs_dedupe')
      .on('jobs')
      .column('dedupe_key')
      .unique()
      .where(sql.ref('dedupe_key'), 'is not', null)
      .execute();
    // A claim through the API reads the caller's open jobs of a kind only, oldest first (`seq`
    // orders those due in the same millisecond).
    await db.schema
      .createIndex('jobs_open_user')
      .on('jobs')
      .columns(['owner_user_id', 'kind', 'run_at', 'seq'])
      .where(sql.ref('status'), 'in', sql`('queued', 'running')`)
      .execute();
  },
});
