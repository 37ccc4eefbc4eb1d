import type { Kysely, Migration } from 'kysely';

/**
 * Blobs the storage collection found unreferenced (server/features/builds/job/collect-artifacts.ts): each is
 * removed from the store a grace period later, in the same transaction that deletes its row,
 * unless a build that reuses it has deleted the row first. The row is the lock that keeps a
 * collection from removing a blob a build is about to reference.
 */
export const condemnedBlobs: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('condemned_blobs')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('since', 'text', (c) => c.notNull())
      .execute();
  },
};
