import { type Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { isUniqueViolation } from '../../server/platform/store/errors.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('023 adds deploy_hooks beside the projects already there: counts start at zero, names are unique per project', async () => {
  await withMigratingStore('slipway-deploy-hooks-migration-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    const db = store.db as never as Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('022_upload_bytes')).error).toBeUndefined();
    await db.insertInto('users').values({ id: 'usr_a', email: 'a@example.com', created_at: now }).execute();
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
    const project = (id: string) => ({
      id,
      organization_id: 'org_a',
      name: id.replace('_', '-'),
      repository_url: 'https://example.com/r.git',
      branch: 'main',
      status: 'active',
      production_host: id.replace('_', '-'),
      created_at: now,
      updated_at: now,
    });
    await db
      .insertInto('projects')
      .values([project('prj_a'), project('prj_b')])
      .execute();

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const hook = (id: string, projectId: string, name: string) => ({
      id,
      project_id: projectId,
      name,
      branch: 'main',
      secret_hash: 'f'.repeat(64),
      created_by: 'usr_a',
      created_at: now,
    });
    await db
      .insertInto('deploy_hooks')
      .values([hook('dph_1', 'prj_a', 'cms'), hook('dph_2', 'prj_b', 'cms')])
      .execute();
    const rows = await db.selectFrom('deploy_hooks').selectAll().orderBy('id').execute();
    expect(
      rows.map((r) => [
        r.id,
        Number(r.window_start),
        Number(r.window_count),
        r.last_used_at,
        r.last_deployment_id,
      ]),
    ).toEqual([
      ['dph_1', 0, 0, null, null],
      ['dph_2', 0, 0, null, null],
    ]);
    const dup = await db
      .insertInto('deploy_hooks')
      .values(hook('dph_3', 'prj_a', 'cms'))
      .execute()
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(isUniqueViolation(dup)).toBe(true);
    // A hook belongs to a project that exists.
    const orphan = await db
      .insertInto('deploy_hooks')
      .values(hook('dph_4', 'prj_missing', 'x'))
      .execute()
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(orphan).not.toBeNull();
  });
});
