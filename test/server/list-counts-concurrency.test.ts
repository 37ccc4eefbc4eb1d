import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { deploymentRow, insertProject } from '../helpers/edge.ts';
import { listCountsNow } from '../helpers/list-counts.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const STATUSES = ['queued', 'building', 'deploying', 'live', 'failed'] as const;

/** A small deterministic generator, so a failure replays the same interleaving of writes. */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
}

/**
 * Writers side by side on every connection of the pool (10 on PostgreSQL): deployments inserted
 * one per transaction as the service does, some older than rows already there (their places move
 * the newer ones), statuses and targets changed, projects suspended, transactions rolled back.
 * Afterwards every counter equals COUNT(*) of its rows and every place the rows' rank.
 */
it(`keeps counters and places exact under concurrent writers (${testDialect()})`, async () => {
  const user = await t.user('writers@example.com');
  const projects: Awaited<ReturnType<typeof insertProject>>[] = [];
  for (let i = 0; i < 3; i++) projects.push(await insertProject(t, user.orgId, { name: `busy-${i}` }));
  const ids: string[] = [];
  const base = Date.UTC(2026, 10, 1);
  const writer = async (w: number) => {
    const pick = random(w + 1);
    for (let step = 0; step < 25; step++) {
      const project = projects[pick(projects.length)]!;
      const kind = pick(10);
      if (kind < 5 || ids.length === 0) {
        // Mostly newest, sometimes up to an hour back, sometimes the same millisecond as another.
        const at = new Date(base + w * 1000 + step * 60_000 - (kind === 0 ? pick(3_600_000) : 0));
        const row = deploymentRow(project.id, at.toISOString(), {
          status: STATUSES[pick(STATUSES.length)]!,
          target: pick(2) ? 'production' : 'preview',
          branch: `b-${pick(4)}`,
        });
        await t.deps.db.transaction().execute((tx) => tx.insertInto('deployments').values(row).execute());
        ids.push(row.id);
      } else if (kind < 8) {
        const id = ids[pick(ids.length)]!;
        await t.deps.db
          .updateTable('deployments')
          .set(kind === 7 ? { target: 'production' } : { status: STATUSES[pick(STATUSES.length)]! })
          .where('id', '=', id)
          .execute();
      } else if (kind === 8) {
        await t.deps.db
          .updateTable('projects')
          .set({ status: pick(2) ? 'suspended' : 'active' })
          .where('id', '=', project.id)
          .execute();
      } else {
        // Written, then rolled back: nothing of it may stay counted.
        await t.deps.db
          .transaction()
          .execute(async (tx) => {
            await tx
              .insertInto('deployments')
              .values(deploymentRow(project.id, new Date(base - pick(1000)).toISOString()))
              .execute();
            throw new Error('rolled back');
          })
          .catch((e: Error) => {
            if (e.message !== 'rolled back') throw e;
          });
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, (_, w) => writer(w)));
  const now = await listCountsNow(t.deps.db);
  expect(now.deployments.counted.length).toBeGreaterThan(20);
  expect(now.deployments.kept).toEqual(now.deployments.counted);
  expect(now.projects.kept).toEqual(now.projects.counted);
  expect(now.misplaced).toEqual([]);
});
