import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  batchedCountStatement,
  createBatchedRateCounts,
} from '../../../server/platform/deps/rate-counts/rate-counts-batched.ts';
import type { Counted } from '../../../server/platform/deps/rate-counts/rate-counts.ts';
import type { Store } from '../../../server/platform/store/db.ts';
import { createTestApp, type TestApp, type TestUser } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/**
 * On PostgreSQL the requests that arrive together are counted by one statement
 * (server/platform/deps/rate-counts/rate-counts-batched.ts): exactly, in arrival order, never past the limit, across
 * processes, with each request's project read on the way.
 */
describe.skipIf(!url)(
  `rate-limit counts in batches on PostgreSQL${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let a: TestApp;
    let b: TestApp;
    let alice: TestUser;
    let bob: TestUser;
    let projectId: string;
    beforeAll(async () => {
      database = await createTestDatabase();
      a = await createTestApp({ env: { DATABASE_URL: database.url } });
      // A second API process on the same database.
      b = await createTestApp({ env: { DATABASE_URL: database.url } });
      alice = await a.user();
      bob = await a.user();
      const res = await a.call(alice, 'POST', '/v1/projects', {
        name: `batches-${Date.now()}`,
        repositoryUrl: 'https://example.com/r.git',
        organizationId: alice.orgId,
      });
      expect(res.status).toBe(201);
      projectId = res.body.data.id;
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await database?.drop();
    });

    /** The store of `app`, counting the statements run through it. */
    const counting = (app: TestApp) => {
      const seen = { statements: 0 };
      const store: Pick<Store, 'run'> = {
        run: (statement, ...params) => {
          seen.statements++;
          return app.deps.store.run(statement, ...params);
        },
      };
      return { store, seen };
    };
    const stored = async (userId: string, windowStart: number) => {
      const row = await a.deps.db
        .selectFrom('rate_limits')
        .select('count')
        .where('user_id', '=', userId)
        .where('window_start', '=', windowStart)
        .executeTakeFirst();
      return row ? Number(row.count) : undefined;
    };
    const counts = (answers: Counted[]) => answers.map((c) => c.count);

    it("counts one turn's requests in one statement and reads each one's project", async () => {
      const { store, seen } = counting(a);
      const rate = createBatchedRateCounts(store);
      const missing = `prj_${randomUUID()}`;
      const answers = await Promise.all([
        rate.take(alice.userId, 3600, 100, projectId),
        rate.take(bob.userId, 3600, 100, projectId),
        rate.take(alice.userId, 3600, 100),
        rate.take(alice.userId, 3600, 100, missing),
        rate.take(bob.userId, 3600, 100, projectId),
        rate.take(alice.userId, 3600, 100, projectId),
      ]);
      expect(seen.statements).toBe(1);
      expect(counts(answers)).toEqual([1, 1, 2, 3, 2, 4]);
      expect(answers[0].project).toMatchObject({ id: projectId, member_role: 'owner' });
      // A stranger gets the row without a role (the route answers 404), a missing project null.
      expect(answers[1].project).toMatchObject({ id: projectId, member_role: null });
      expect(answers[2]).toEqual({ count: 2 });
      expect(answers[3]).toEqual({ count: 3, project: null });
      expect(answers[5].project).toMatchObject({ id: projectId, member_role: 'owner' });
      expect(await stored(alice.userId, 3600)).toBe(4);
      expect(await stored(bob.userId, 3600)).toBe(2);
    });

    it('grants in arrival order what fits under the limit and counts no refused request', async () => {
      const { store, seen } = counting(a);
      const rate = createBatchedRateCounts(store);
      const first = await Promise.all(Array.from({ length: 8 }, () => rate.take(alice.userId, 7200, 5)));
      expect(counts(first)).toEqual([1, 2, 3, 4, 5, null, null, null]);
      expect(await stored(alice.userId, 7200)).toBe(5);
      const again = await Promise.all([rate.take(alice.userId, 7200, 5), rate.take(alice.userId, 7200, 5)]);
      expect(counts(again)).toEqual([null, null]);
      expect(await stored(alice.userId, 7200)).toBe(5);
      expect(seen.statements).toBe(2);
      // A later window starts again.
      expect(await rate.take(alice.userId, 10_800, 5)).toEqual({ count: 1 });
    });

    it('shares one count between processes counting at once: exactly the limit between them', async () => {
      const one = createBatchedRateCounts(a.deps.store);
      const two = createBatchedRateCounts(b.deps.store);
      const all = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? one : two).take(bob.userId, 14_400, 10)).concat(
          Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? two : one).take(bob.userId, 14_400, 10)),
        ),
      );
      const granted = counts(all)
        .filter((c): c is number => c !== null)
        .sort((x, y) => x - y);
      expect(granted).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await stored(bob.userId, 14_400)).toBe(10);
    });

    it('puts a request with another limit for the same user into the next statement', async () => {
      const { store, seen } = counting(a);
      const rate = createBatchedRateCounts(store);
      const answers = await Promise.all([
        rate.take(bob.userId, 18_000, 2),
        rate.take(bob.userId, 18_000, 50),
        rate.take(bob.userId, 18_000, 2),
        rate.take(bob.userId, 18_000, 2),
      ]);
      // The first statement grants two of the three at limit 2; the next counts the third at 50.
      expect(counts(answers)).toEqual([1, 3, 2, null]);
      expect(seen.statements).toBe(2);
      expect(await stored(bob.userId, 18_000)).toBe(3);
    });

    it('lets two processes count many users in opposite orders at once without a deadlock', async () => {
      const one = createBatchedRateCounts(a.deps.store);
      const two = createBatchedRateCounts(b.deps.store);
      const users = Array.from({ length: 40 }, (_, i) => `usr_order_${String(i).padStart(2, '0')}`);
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all([
          ...users.map((u) => one.take(u, 25_200, 1000)),
          ...[...users].reverse().map((u) => two.take(u, 25_200, 1000)),
        ]);
        expect(answers.every((c) => c.count !== null)).toBe(true);
      }
      const rows = await a.deps.db
        .selectFrom('rate_limits')
        .select(['count'])
        .where('window_start', '=', 25_200)
        .execute();
      expect(rows.map((r) => Number(r.count))).toEqual(users.map(() => 10));
    });

    it('reads projects and memberships by their indexes, with the plan every batch shares', async () => {
      const { sql, parameters } = batchedCountStatement
        .build(a.deps.db, ...Array.from({ length: 7 }, (_, i) => `\u0000p${i}`))
        .compile();
      expect(parameters).toHaveLength(7);
      const client = new pg.Client(database.url);
      await client.connect();
      try {
        // The generic plan (what a named statement settles on after its first executions), with
        // 5,000 organizations, projects and members, so the planner weighs a real table (rolled
        // back after).
        await client.query('begin');
        await client.query('set local plan_cache_mode = force_generic_plan');
        await client.query(`
          insert into organizations (id, name, display_name, plan, created_at, updated_at)
            select 'org_plan_' || i, 'plan-' || i, 'Plan', 'free', '2026-11-26', '2026-11-26'
            from generate_series(1, 5000) i;
          insert into projects (id, organization_id, name, repository_url, branch, status, production_host, created_at, updated_at)
            select 'prj_plan_' || i, 'org_plan_' || i, 'plan-' || i, 'https://example.com/r.git', 'main', 'active',
              'plan-' || i || '.example.com', '2026-11-26', '2026-11-26'
            from generate_series(1, 5000) i;
          insert into memberships (id, organization_id, email, role, invited_at, user_id)
            select 'mem_plan_' || i, 'org_plan_' || i, 'plan' || i || '@example.com', 'owner', '2026-11-26', 'usr_plan_' || i
            from generate_series(1, 5000) i;
          analyze organizations, projects, memberships`);
        await client.query(
          `prepare batch(text[], bigint[], text[], text[], bigint[], int[], int[]) as ${sql}`,
        );
        const plan = await client.query<{ 'QUERY PLAN': string }>(
          `explain execute batch('{${alice.userId}}', '{28800}', '{${projectId}}', '{${alice.userId}}', '{28800}', '{1}', '{10}')`,
        );
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(text).toMatch(
          /Index Scan using projects_pkey on projects p[^\n]*\n\s+Index Cond: \(id = r\.project_id\)/,
        );
        expect(text).toMatch(
          /Index Scan using \w+ on memberships m[^\n]*\n\s+Index Cond: \(organization_id = p\.organization_id\)/,
        );
        expect(text).toMatch(/Conflict Arbiter Indexes: rate_limits_pk/);
        expect(text).not.toMatch(/Seq Scan/);
        await client.query('rollback');
      } finally {
        await client.end();
      }
    });

    it('fails only the batch whose statement failed; the next one counts', async () => {
      let fail = true;
      const rate = createBatchedRateCounts({
        run: (statement, ...params) => {
          if (fail) {
            fail = false;
            return Promise.reject(new Error('connection lost'));
          }
          return a.deps.store.run(statement, ...params);
        },
      });
      const failed = await Promise.allSettled([
        rate.take(alice.userId, 21_600, 10),
        rate.take(bob.userId, 21_600, 10),
      ]);
      expect(failed.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : r.status))).toEqual([
        'connection lost',
        'connection lost',
      ]);
      expect(await stored(alice.userId, 21_600)).toBeUndefined();
      expect(await rate.take(alice.userId, 21_600, 10)).toEqual({ count: 1 });
      await rate.flush();
    });

    it("never answers a stranger from the owner's row when both ask for a project in one batch", async () => {
      const stranger = await a.user();
      const calls = Array.from({ length: 40 }, (_, i) =>
        a.call(i % 2 === 0 ? alice : stranger, 'GET', `/v1/projects/${projectId}`),
      );
      const answers = await Promise.all(calls);
      expect(answers.filter((_, i) => i % 2 === 0).map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(answers.filter((_, i) => i % 2 === 1).map((r) => r.status)).toEqual(Array(20).fill(404));
      expect(
        answers.filter((_, i) => i % 2 === 1).every((r) => !JSON.stringify(r.body).includes('batches-')),
      ).toBe(true);
    });

    it('answers concurrent API requests of two processes with exactly the limit', async () => {
      const u = await a.user();
      await a.deps.db.updateTable('organizations').set({ plan: 'free' }).where('id', '=', u.orgId).execute();
      const used = Number((await a.call(u, 'GET', '/v1/user')).headers['x-ratelimit-remaining']);
      const calls = Array.from({ length: used + 6 }, (_, i) =>
        (i % 2 === 0 ? a : b).call(u, 'GET', '/v1/user'),
      );
      const answers = await Promise.all(calls);
      const ok = answers.filter((r) => r.status === 200);
      expect(ok).toHaveLength(used);
      expect(answers.filter((r) => r.status === 429)).toHaveLength(6);
      expect(ok.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y)).toEqual(
        Array.from({ length: used }, (_, i) => i),
      );
    });
  },
);
