import { expect, it } from 'vitest';
import { isUniqueViolation } from '../../server/platform/store/errors.ts';
import type { DomainsTable } from '../../server/platform/store/schema.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('upgrades domains to claims: rows kept, pending names shareable, a verified name unique', async () => {
  await withMigratingStore('slipway-claims-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    expect((await migrator.migrateTo('006_secrets_at_rest')).error).toBeUndefined();
    await store.db
      .insertInto('users')
      .values({ id: 'usr_a', email: 'a@example.com', created_at: now })
      .execute();
    await store.db
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
    const project = (id: string) => ({
      id,
      organization_id: 'org_a',
      name: id,
      repository_url: 'https://example.com/r.git',
      branch: 'main',
      framework: null,
      status: 'active' as const,
      production_host: id,
      production_deployment_id: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    });
    await store.db
      .insertInto('projects')
      .values([project('prj_a'), project('prj_b'), project('prj_c')] as never)
      .execute();
    const domain = (id: string, projectId: string, name: string, status: DomainsTable['status']) => ({
      id,
      project_id: projectId,
      domain: name,
      status,
      ssl_status: 'pending' as const,
      ssl_error: null,
      verification_token: `slipway-verification=${id}`,
      verified_at: status === 'verified' ? now : null,
      created_at: now,
      updated_at: now,
    });
    await store.db
      .insertInto('domains')
      .values([
        domain('dom_1', 'prj_a', 'www.a.example', 'verified'),
        domain('dom_2', 'prj_a', 'p.a.example', 'pending'),
      ])
      .execute();
    // Before: one row per name in the whole service.
    const before = await store.db
      .insertInto('domains')
      .values(domain('dom_3', 'prj_b', 'p.a.example', 'pending'))
      .execute()
      .catch((err: unknown) => err);
    expect(isUniqueViolation(before)).toBe(true);

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const kept = await store.db.selectFrom('domains').selectAll().orderBy('id').execute();
    expect(kept).toEqual([
      domain('dom_1', 'prj_a', 'www.a.example', 'verified'),
      domain('dom_2', 'prj_a', 'p.a.example', 'pending'),
    ]);
    // After: other projects may claim a name, pending or verified elsewhere...
    await store.db
      .insertInto('domains')
      .values([
        domain('dom_3', 'prj_b', 'p.a.example', 'pending'),
        domain('dom_4', 'prj_b', 'www.a.example', 'pending'),
      ])
      .execute();
    // ...but a project claims a name once, and a name is verified for one project at most.
    for (const row of [
      domain('dom_5', 'prj_b', 'p.a.example', 'pending'),
      domain('dom_6', 'prj_c', 'www.a.example', 'verified'),
    ]) {
      const err = await store.db
        .insertInto('domains')
        .values(row)
        .execute()
        .catch((e: unknown) => e);
      expect(isUniqueViolation(err), row.id).toBe(true);
    }
  });
});
