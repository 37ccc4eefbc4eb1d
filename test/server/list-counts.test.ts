import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { deploymentRow, insertDeployment, insertProject } from '../helpers/edge.ts';
import { listCountsNow } from '../helpers/list-counts.ts';

const at = (second: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, second)).toISOString();

/**
 * Exact totals from counters kept by triggers (migration 026), and page numbers read through
 * `deployments.list_seq`: the same items and totals as counting and skipping rows would give.
 */
describe('list totals kept by triggers', () => {
  let t: TestApp;
  let alice: TestUser;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '100000' } });
    alice = await t.user('alice@example.com');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name: 'counted',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    projectId = res.body.data.id;
    // Inserted out of order (an older one after newer ones) and several sharing a second, in
    // single inserts and in one statement of many rows.
    const seconds = [10, 3, 3, 25, 0, 17, 17, 17, 8, 30, 1, 12, 12, 29, 5, 21, 2, 14, 9, 26, 4, 11, 27];
    for (const [i, s] of seconds.slice(0, 12).entries()) {
      await insertDeployment(t, projectId, {
        created_at: at(s),
        updated_at: at(s),
        status: i % 4 === 0 ? 'failed' : 'live',
        target: i % 3 === 0 ? 'production' : 'preview',
        branch: i % 3 === 0 ? 'main' : `feature-${i % 2}`,
      });
    }
    await t.deps.db
      .insertInto('deployments')
      .values(
        seconds.slice(12).map((s, i) =>
          deploymentRow(projectId, at(s), {
            status: i % 2 ? 'queued' : 'live',
            target: 'preview',
            branch: `feature-${i % 2}`,
            commit_hash: `${i % 3 ? 'abcdef0' : '1234567'}${String(i).padStart(33, '0')}`,
          }),
        ),
      )
      .execute();
  });
  afterAll(() => t.close());

  const list = (query: string) => t.call(alice, 'GET', `/v1/projects/${projectId}/deployments?${query}`);

  async function expectKept() {
    const now = await listCountsNow(t.deps.db);
    expect(now.deployments.kept).toEqual(now.deployments.counted);
    expect(now.projects.kept).toEqual(now.projects.counted);
    expect(now.misplaced).toEqual([]);
  }

  async function expectedIds(filters: Record<string, string>): Promise<string[]> {
    let q = t.deps.db.selectFrom('deployments').select('id').where('project_id', '=', projectId);
    for (const [k, v] of Object.entries(filters)) {
      q =
        k === 'commitHash'
          ? q.where('commit_hash', 'like', `${v}%`)
          : q.where(k as 'status', '=', v as 'live');
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((r) => r.id);
  }

  it('counts every combination of status, target and branch, and places every row', async () => {
    await expectKept();
    const now = await listCountsNow(t.deps.db);
    expect(now.deployments.kept.find((r) => r.key === `${projectId}///`)).toEqual({
      key: `${projectId}///`,
      n: 23,
    });
  });

  const FILTERS: Record<string, string>[] = [
    {},
    { status: 'live' },
    { target: 'preview', branch: 'feature-1' },
    { status: 'queued' },
    { commitHash: 'abcdef0' },
  ];
  for (const filters of FILTERS) {
    it(`answers every page number with the rows and total of an offset, ${JSON.stringify(filters)}`, async () => {
      const ids = await expectedIds(filters);
      const query = new URLSearchParams(filters).toString();
      for (const limit of [1, 4, 7]) {
        for (let page = 1; page <= Math.ceil(ids.length / limit) + 1; page++) {
          const res = await list(`${query}&limit=${limit}&page=${page}`);
          expect(res.status, res.text).toBe(200);
          const want = ids.slice((page - 1) * limit, page * limit);
          expect(res.body.data.map((d: { id: string }) => d.id)).toEqual(want);
          expect(res.body.meta.total).toBe(ids.length);
          expect(res.body.meta.next === null).toBe(page * limit >= ids.length);
        }
      }
    });
  }

  it('keeps the counts through status changes, promotion and a project deleted', async () => {
    const before = (await list('status=queued&limit=1')).body.meta.total;
    const queued = await expectedIds({ status: 'queued' });
    await t.deps.db
      .updateTable('deployments')
      .set({ status: 'failed' })
      .where('id', '=', queued[0]!)
      .execute();
    expect((await list('status=queued&limit=1')).body.meta.total).toBe(before - 1);
    // A statement that changes several rows, and one that changes nothing counted.
    await t.deps.db
      .updateTable('deployments')
      .set({ target: 'production', status: 'live' })
      .where('project_id', '=', projectId)
      .where('branch', '=', 'feature-1')
      .execute();
    await t.deps.db
      .updateTable('deployments')
      .set({ message: 'hi' })
      .where('project_id', '=', projectId)
      .execute();
    await expectKept();
    expect((await list('target=preview&branch=feature-1&limit=1')).body.meta.total).toBe(0);
    // Projects: created, suspended, deleted (soft), each moving one count.
    const other = await insertProject(t, alice.orgId, { name: 'other' });
    const projects = () => t.call(alice, 'GET', `/v1/projects?org=${alice.orgId}&limit=1`);
    expect((await projects()).body.meta.total).toBe(2);
    await t.deps.db.updateTable('projects').set({ status: 'suspended' }).where('id', '=', other.id).execute();
    expect((await projects()).body.meta.total).toBe(2);
    expect(
      (await t.call(alice, 'GET', `/v1/projects?org=${alice.orgId}&status=suspended`)).body.meta.total,
    ).toBe(1);
    expect((await t.call(alice, 'DELETE', `/v1/projects/${other.id}`)).status).toBe(200);
    expect((await projects()).body.meta.total).toBe(1);
    expect((await t.call(alice, 'GET', `/v1/projects?status=deleted`)).body.meta.total).toBe(1);
    await expectKept();
  });

  it('keeps places and counts when rows are deleted', async () => {
    const ids = await expectedIds({});
    // The middle one and the newest: the rows after it move down one place.
    await t.deps.db.deleteFrom('deployments').where('id', 'in', [ids[5]!, ids[0]!]).execute();
    await expectKept();
    const res = await list('limit=4&page=2');
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual((await expectedIds({})).slice(4, 8));
    expect(res.body.meta.total).toBe(ids.length - 2);
  });
});
