import { expect, it } from 'vitest';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('counts the uploads each organization kept before the upgrade into its upload_bytes', async () => {
  await withMigratingStore('slipway-upload-bytes-migration-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('021_fair_jobs')).error).toBeUndefined();
    const org = (id: string) => ({
      id,
      name: id.replace('_', '-'),
      display_name: id,
      plan: 'free',
      personal_user_id: null,
      created_at: now,
      updated_at: now,
    });
    await db
      .insertInto('organizations')
      .values([org('org_a'), org('org_b'), org('org_c')])
      .execute();
    const file = (organization_id: string, sha256: string, size: number) => ({
      organization_id,
      sha256,
      size,
      last_used_at: now,
    });
    // org_a and org_b share one file's bytes: each is charged for it; org_c uploaded nothing.
    await db
      .insertInto('uploaded_files')
      .values([
        file('org_a', 'a'.repeat(64), 5_000_000_000),
        file('org_a', 'b'.repeat(64), 7),
        file('org_b', 'a'.repeat(64), 5_000_000_000),
      ])
      .execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows = await db.selectFrom('organizations').select(['id', 'upload_bytes']).orderBy('id').execute();
    expect(rows.map((r) => [r.id, Number(r.upload_bytes)])).toEqual([
      ['org_a', 5_000_000_007],
      ['org_b', 5_000_000_000],
      ['org_c', 0],
    ]);
  });
});
