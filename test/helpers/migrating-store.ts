import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { createCipher } from '../../server/core/secrets.ts';
import { openStore, type Store } from '../../server/platform/store/db.ts';
import { allMigrations } from '../../server/platform/store/migrations/index.ts';
import { databaseForTest } from './database.ts';

/**
 * A fresh database (a SQLite file, or a PostgreSQL database on the suite's PostgreSQL run) with a
 * migrator over every migration, for tests that migrate part way, write rows of that time and
 * migrate on; removed afterwards whatever happens.
 */
export async function withMigratingStore(
  prefix: string,
  test: (s: { store: Store; migrator: Migrator }) => Promise<void>,
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const database = await databaseForTest(undefined, dataDir, true);
  const store = openStore({ databaseUrl: database.env.DATABASE_URL, dataDir });
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => allMigrations(store.dialect, createCipher(Buffer.alloc(32, 7))) },
  });
  try {
    await test({ store, migrator });
  } finally {
    await store.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
