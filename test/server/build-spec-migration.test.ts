import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { decodeBuildSpec } from '../../server/platform/store/build-spec.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('gives deployments queued before build specs the spec their build would have had, and drops the old columns', async () => {
  await withMigratingStore('slipway-spec-migration-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('017_rate_limit_granted')).error).toBeUndefined();
    await db.insertInto('users').values({ id: 'usr_a', email: 'a@example.com', created_at: now }).execute();
    await db
      .insertInto('organizations')
      .values({
        id: 'org_a',
        name: 'a',
        display_name: 'a',
        plan: 'free',
        personal_user_id: 'usr_a',
        created_at: now,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto('projects')
      .values({
        id: 'prj_a',
        organization_id: 'org_a',
        name: 'a',
        repository_url: 'https://example.com/r.git',
        branch: 'main',
        framework: 'vite',
        install_command: null,
        build_command: 'npm run build:site',
        output_directory: 'out',
        root_directory: 'web',
        status: 'active',
        production_host: 'a',
        production_deployment_id: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    const file = { path: 'index.html', sha256: 'a'.repeat(64), size: 3, mode: 0o644 };
    const row = (id: string, values: Record<string, unknown>) => ({
      id,
      project_id: 'prj_a',
      status: 'queued',
      target: 'production',
      branch: 'main',
      requested_commit: null,
      host: `a-${id}`,
      created_at: now,
      updated_at: now,
      source: 'git',
      source_files: null,
      use_cache: 1,
      ...values,
    });
    await db
      .insertInto('deployments')
      .values([
        row('dpl_git', { requested_commit: 'abcdef0' }),
        row('dpl_fork', { target: 'preview', branch: 'refs/pull/4/head', use_cache: 0 }),
        row('dpl_upload', {
          target: 'preview',
          branch: 'feature',
          source: 'upload',
          source_files: JSON.stringify([file]),
        }),
        row('dpl_rollback', { source_deployment_id: 'dpl_git' }),
      ])
      .execute();

    expect((await migrator.migrateTo('018_build_spec')).error).toBeUndefined();
    const specs = Object.fromEntries(
      (await db.selectFrom('deployments').select(['id', 'build_spec']).execute()).map((r) => [
        r.id,
        r.build_spec,
      ]),
    ) as Record<string, string | null>;
    const settings = {
      installCommand: null,
      buildCommand: 'npm run build:site',
      outputDirectory: 'out',
      rootDirectory: 'web',
    };
    expect(decodeBuildSpec('dpl_git', specs.dpl_git!)).toEqual({
      source: { kind: 'git', ref: 'main', commit: 'abcdef0' },
      framework: 'vite',
      settings,
      cache: { save: 'production:main', restore: [{ lane: 'production:main' }] },
      target: 'production',
    });
    expect(decodeBuildSpec('dpl_fork', specs.dpl_fork!)).toMatchObject({
      source: { kind: 'git', ref: 'refs/pull/4/head', commit: null },
      cache: null,
      target: 'preview',
    });
    expect(decodeBuildSpec('dpl_upload', specs.dpl_upload!)).toMatchObject({
      source: { kind: 'upload', files: [file] },
      cache: { save: 'preview:feature', restore: [{ lane: 'preview:feature' }, { newestOf: 'preview' }] },
    });
    expect(specs.dpl_rollback).toBeNull();
    // The columns the spec replaced are gone.
    const gone = await sql`select source_files from deployments`.execute(store.db).then(
      () => 'still there',
      (err: Error) => err.message,
    );
    expect(gone).toMatch(/source_files/);
  });
});
