import { type Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('025 keeps projects made before it unprotected, without a bypass secret', async () => {
  await withMigratingStore('slipway-protection-migration-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    const db = store.db as never as Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('024_branch_aliases')).error).toBeUndefined();
    await db
      .insertInto('organizations')
      .values({
        id: 'org_a',
        name: 'a',
        display_name: 'A',
        plan: 'free',
        personal_user_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto('projects')
      .values({
        id: 'prj_old',
        organization_id: 'org_a',
        name: 'old',
        repository_url: 'https://example.com/r.git',
        branch: 'main',
        status: 'active',
        production_host: 'old',
        created_at: now,
        updated_at: now,
      })
      .execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const row = await db
      .selectFrom('projects')
      .select(['protection', 'protection_bypass_hash', 'protection_bypass_created_at'])
      .where('id', '=', 'prj_old')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      protection: 'none',
      protection_bypass_hash: null,
      protection_bypass_created_at: null,
    });
    expect(await db.selectFrom('protection_codes').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('protection_links').selectAll().execute()).toEqual([]);
  });
});
