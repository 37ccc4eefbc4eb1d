import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { deploymentRow, projectRow } from '../helpers/edge.ts';
import { listCountsNow } from '../helpers/list-counts.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('counts and places the rows already there when it migrates, then keeps them', async () => {
  await withMigratingStore('slipway-list-counts-', async ({ store, migrator }) => {
    const now = '2026-11-01T00:00:00.000Z';
    const db = store.db as never as Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('024_branch_aliases')).error).toBeUndefined();
    for (const org of ['org_a', 'org_b']) {
      await db
        .insertInto('organizations')
        .values({
          id: org,
          name: org.replace('_', '-'),
          display_name: org,
          plan: 'free',
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    const projects = [
      projectRow('org_a', now, { id: 'prj_a1', name: 'a1' }),
      projectRow('org_a', now, { id: 'prj_a2', name: 'a2', status: 'suspended' }),
      projectRow('org_a', now, { id: 'prj_a3', name: 'a3', status: 'deleted', deleted_at: now }),
      projectRow('org_b', now, { id: 'prj_b1', name: 'b1' }),
    ];
    // Rows of that time: without the columns later migrations add.
    const before = projects.map(
      ({
        detected_framework: _d,
        protection: _p,
        protection_bypass_hash: _h,
        protection_bypass_created_at: _c,
        ...p
      }) => p,
    );
    await db.insertInto('projects').values(before).execute();
    // Rows of that time: without list_seq; out of order, some in the same millisecond.
    const rows = [7, 3, 3, 9, 1, 5, 5, 0, 8].map((s, i) => {
      const { list_seq: _, ...row } = deploymentRow(
        i % 3 ? 'prj_a1' : 'prj_b1',
        `2026-11-01T00:00:0${s}.000Z`,
        {
          status: i % 2 ? 'failed' : 'live',
          target: i % 4 ? 'preview' : 'production',
          branch: i % 4 ? `f-${i % 2}` : 'main',
        },
      );
      return row;
    });
    await db.insertInto('deployments').values(rows).execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();

    const typed = store.db;
    let counts = await listCountsNow(typed);
    expect(counts.deployments.kept).toEqual(counts.deployments.counted);
    expect(counts.deployments.kept.find((r) => r.key === 'prj_a1///')?.n).toBe(6);
    expect(counts.deployments.kept.find((r) => r.key === 'prj_a1/failed//f-1')?.n).toBe(3);
    expect(counts.projects.kept).toEqual([
      { key: 'org_a/active', n: 1 },
      { key: 'org_a/deleted', n: 1 },
      { key: 'org_a/suspended', n: 1 },
      { key: 'org_b/active', n: 1 },
    ]);
    expect(counts.misplaced).toEqual([]);

    // The triggers run from here on: one more of each, and a change of status.
    await typed
      .insertInto('deployments')
      .values(deploymentRow('prj_a1', '2026-11-01T00:00:04.000Z'))
      .execute();
    await typed
      .insertInto('projects')
      .values(projectRow('org_b', now, { name: 'b2' }))
      .execute();
    await typed
      .updateTable('deployments')
      .set({ status: 'queued' })
      .where('project_id', '=', 'prj_b1')
      .execute();
    counts = await listCountsNow(typed);
    expect(counts.deployments.kept).toEqual(counts.deployments.counted);
    expect(counts.deployments.kept.find((r) => r.key === 'prj_a1///')?.n).toBe(7);
    expect(counts.deployments.kept.find((r) => r.key === 'prj_b1/queued//')?.n).toBe(3);
    expect(counts.projects.kept).toEqual(counts.projects.counted);
    expect(counts.misplaced).toEqual([]);
  });
});
