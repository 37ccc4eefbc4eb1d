import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { expect, it } from 'vitest';
import { createCipher } from '../../server/lib/secrets.ts';
import { openStore } from '../../server/store/db.ts';
import { allMigrations } from '../../server/store/migrations/index.ts';
import { databaseForTest } from '../helpers/database.ts';

it('gives events stored before a body digest, the first of each replayed body only', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-digest-migration-'));
  const database = await databaseForTest(undefined, dataDir, true);
  const store = openStore({ databaseUrl: database.env.DATABASE_URL, dataDir });
  const now = new Date().toISOString();
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => allMigrations(store.dialect, createCipher(Buffer.alloc(32, 7))) },
  });
  const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
  try {
    expect((await migrator.migrateTo('019_used_oidc_tokens')).error).toBeUndefined();
    await db.insertInto('users').values({ id: 'usr_a', email: 'a@example.com', created_at: now }).execute();
    const event = (id: string, body: string) => ({
      id,
      owner_user_id: 'usr_a',
      delivery_id: `d-${id}`,
      name: 'pull_request',
      body,
      signature: `sha256=${'a'.repeat(64)}`,
      ordering_key: 'k',
      status: 'done',
      attempts: 1,
      next_attempt_at: now,
      received_at: now,
    });
    // A replay stored under a new delivery id before the upgrade: the same body twice.
    await db
      .insertInto('github_events')
      .values([event('ghe_1', '{"n":1}'), event('ghe_2', '{"n":1}'), event('ghe_3', '{"n":2}')])
      .execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows = await db.selectFrom('github_events').select(['id', 'body_sha256']).orderBy('seq').execute();
    expect(rows.map((r) => [r.id, typeof r.body_sha256 === 'string' ? r.body_sha256.length : null])).toEqual([
      ['ghe_1', 64],
      ['ghe_2', null],
      ['ghe_3', 64],
    ]);
  } finally {
    await store.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
