import { expect, it } from 'vitest';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('gives projects built before the upgrade the framework their newest build detected', async () => {
  await withMigratingStore('slipway-detected-framework-migration-', async ({ store, migrator }) => {
    const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('024_branch_aliases')).error).toBeUndefined();
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 12, minute)).toISOString();
    await db
      .insertInto('organizations')
      .values({
        id: 'org_a',
        name: 'a',
        display_name: 'a',
        plan: 'free',
        created_at: at(0),
        updated_at: at(0),
      })
      .execute();
    const project = (id: string, framework: string | null) => ({
      id,
      organization_id: 'org_a',
      name: id,
      repository_url: 'https://example.com/r.git',
      branch: 'main',
      framework,
      status: 'active',
      production_host: id,
      created_at: at(0),
      updated_at: at(0),
    });
    await db
      .insertInto('projects')
      .values([project('prj_built', null), project('prj_set', 'vite'), project('prj_never', null)])
      .execute();
    const deployment = (id: string, projectId: string, minute: number, framework: string | null) => ({
      id,
      project_id: projectId,
      status: framework ? 'live' : 'failed',
      target: 'production',
      branch: 'main',
      host: `h-${id}`,
      source: 'git',
      framework,
      created_at: at(minute),
      updated_at: at(minute),
    });
    await db
      .insertInto('deployments')
      .values([
        deployment('dpl_1', 'prj_built', 1, 'static'),
        deployment('dpl_2', 'prj_built', 2, 'nextjs'),
        deployment('dpl_3', 'prj_built', 3, null), // newest, failed before detecting
        deployment('dpl_4', 'prj_set', 1, 'vite'),
        deployment('dpl_5', 'prj_never', 1, null),
      ])
      .execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows = await db
      .selectFrom('projects')
      .select(['id', 'framework', 'detected_framework'])
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { id: 'prj_built', framework: null, detected_framework: 'nextjs' },
      { id: 'prj_never', framework: null, detected_framework: null },
      { id: 'prj_set', framework: 'vite', detected_framework: 'vite' },
    ]);
  });
});
