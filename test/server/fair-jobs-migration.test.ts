import { expect, it } from 'vitest';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('gives open build jobs queued before the upgrade their organization, so they take turns at once', async () => {
  await withMigratingStore('slipway-fair-migration-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('020_github_event_digests')).error).toBeUndefined();
    await db
      .insertInto('organizations')
      .values({ id: 'org_a', name: 'a', display_name: 'A', plan: 'free', created_at: now, updated_at: now })
      .execute();
    await db
      .insertInto('projects')
      .values({
        id: 'prj_a',
        organization_id: 'org_a',
        name: 'site',
        repository_url: 'https://example.com/a.git',
        branch: 'main',
        status: 'active',
        production_host: 'site',
        created_at: now,
        updated_at: now,
      })
      .execute();
    for (const id of ['dpl_1', 'dpl_2'])
      await db
        .insertInto('deployments')
        .values({
          id,
          project_id: 'prj_a',
          status: 'queued',
          target: 'production',
          branch: 'main',
          host: `site-${id}`,
          source: 'git',
          created_at: now,
          updated_at: now,
        })
        .execute();
    const job = (id: string, kind: string, payload: unknown, status: string) => ({
      id,
      kind,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      status,
      run_at: now,
      attempts: 0,
      max_attempts: 2,
      created_at: now,
      updated_at: now,
    });
    await db
      .insertInto('jobs')
      .values([
        job('job_open', 'deployment.build', { deploymentId: 'dpl_1' }, 'queued'),
        job('job_done', 'deployment.build', { deploymentId: 'dpl_2' }, 'done'),
        job('job_gone', 'deployment.build', { deploymentId: 'dpl_deleted' }, 'queued'),
        job('job_bad', 'deployment.build', 'not json', 'queued'),
        job('job_other', 'certificate.issue', { deploymentId: 'dpl_1' }, 'queued'),
      ])
      .execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows = await db.selectFrom('jobs').select(['id', 'fair_key', 'claimed_at']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'job_bad', fair_key: null, claimed_at: null },
      { id: 'job_done', fair_key: null, claimed_at: null },
      { id: 'job_gone', fair_key: null, claimed_at: null },
      { id: 'job_open', fair_key: 'org_a', claimed_at: null },
      { id: 'job_other', fair_key: null, claimed_at: null },
    ]);
  });
});
