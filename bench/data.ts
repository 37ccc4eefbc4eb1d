import { createHash } from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import { encodeCursor } from '../server/platform/http/pagination.ts';
import { newId } from '../server/core/ids.ts';
import type { JobsTable } from '../server/platform/store/schema.ts';
import { createTestApp, type TestApp } from '../test/helpers/app.ts';
import { deploymentRow, projectRow } from '../test/helpers/edge.ts';
import { table } from './lib.ts';

const SIZES = [1_000, 10_000, 100_000];
const PROJECT_SIZES = [100, 1_000, 10_000];
const ROUNDS = Number(process.env.BENCH_DATA_ROUNDS ?? 200);
const CHUNK = 500;
const BASE = Date.UTC(2026, 0, 1);

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const hash = (i: number) => createHash('sha1').update(String(i)).digest('hex');

interface Figure {
  p50: number;
  p99: number;
  rps: number;
}

/** `rounds` requests one after the other: p50, p99 and the requests per second that makes. */
async function time(rounds: number, run: () => Promise<void>): Promise<Figure> {
  for (let i = 0; i < 10; i++) await run(); // warm-up
  const ms: number[] = [];
  const start = performance.now();
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  const seconds = (performance.now() - start) / 1000;
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), rps: Math.round(rounds / seconds) };
}

async function insertChunks<T>(rows: T[], insert: (chunk: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += CHUNK) await insert(rows.slice(i, i + CHUNK));
}

/**
 * After a bulk insert, PostgreSQL's statistics still describe the table before it (autovacuum
 * analyzes it within a minute or so): the planner would guess an organization has a few
 * projects and sort all of them. Measure the database as it runs, with statistics.
 */
async function analyze(t: TestApp) {
  if (t.deps.store.dialect.name === 'postgres') await sql`analyze`.execute(t.deps.db);
}

/**
 * Grows data through the store's own tables (bulk inserts of the rows the service writes) and
 * reads it through the HTTP API at each size: lists of deployments at 1k / 10k / 100k in one
 * project (first page, deepest page by number, deep page by cursor, filtered by status and by
 * commit), lists of projects at 100 / 1k / 10k in one organization, and job claims beside 1k /
 * 10k / 100k finished jobs. Prints p50 / p99 / sequential requests per second, and each p50 as a
 * ratio of the smallest size's (flat is 1.0).
 */
export async function benchData(): Promise<string> {
  const parts = [`SQLite\n${await runOn('sqlite')}`];
  if (process.env.SLIPWAY_TEST_DATABASE_URL) {
    const before = process.env.SLIPWAY_TEST_DIALECT;
    process.env.SLIPWAY_TEST_DIALECT = 'postgres';
    try {
      parts.push(`PostgreSQL\n${await runOn('postgres')}`);
    } finally {
      if (before === undefined) delete process.env.SLIPWAY_TEST_DIALECT;
      else process.env.SLIPWAY_TEST_DIALECT = before;
    }
  } else {
    parts.push(
      'PostgreSQL: not measured (set SLIPWAY_TEST_DATABASE_URL to a server, e.g. postgres://postgres@127.0.0.1:5432/postgres)',
    );
  }
  return parts.join('\n\n');
}

async function runOn(dialect: string): Promise<string> {
  const t = await createTestApp({ env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '100000000' } });
  try {
    const user = await t.user('bench@example.com');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', user.orgId)
      .execute();
    const rows: Record<string, string | number>[] = [];
    const add = (query: string, size: number, f: Figure, baseline: Map<string, number>) => {
      if (!baseline.has(query)) baseline.set(query, f.p50);
      rows.push({
        dialect,
        query,
        size,
        p50_ms: f.p50.toFixed(2),
        p99_ms: f.p99.toFixed(2),
        'req/s': f.rps,
        'p50 vs smallest': (f.p50 / baseline.get(query)!).toFixed(2),
      });
    };
    await deploymentLists(t, user, add);
    await projectLists(t, user, add);
    await jobClaims(t, add);
    return table(rows);
  } finally {
    await t.close();
  }
}

type Add = (query: string, size: number, f: Figure, baseline: Map<string, number>) => void;
type User = Awaited<ReturnType<TestApp['user']>>;

async function get(t: TestApp, user: User, url: string): Promise<{ meta: { next?: string | null } }> {
  const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${user.token}` } });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

async function deploymentLists(t: TestApp, user: User, add: Add) {
  const project = projectRow(user.orgId, new Date(BASE).toISOString(), { name: 'big' });
  await t.deps.db.insertInto('projects').values(project).execute();
  const base = `/v1/projects/${project.id}/deployments`;
  const baseline = new Map<string, number>();
  let made = 0;
  for (const size of SIZES) {
    const fresh = [];
    for (; made < size; made++) {
      const at = new Date(BASE + made * 1000).toISOString();
      fresh.push(
        deploymentRow(project.id, at, {
          commit_hash: hash(made),
          commit_message: `Change number ${made}`,
          author: 'dev@example.com',
          status: made % 10 === 0 ? 'failed' : 'live',
          target: made % 3 === 0 ? 'production' : 'preview',
          branch: made % 3 === 0 ? 'main' : `feature-${made % 50}`,
        }),
      );
    }
    await insertChunks(fresh, (chunk) => t.deps.db.insertInto('deployments').values(chunk).execute());
    await analyze(t);
    // A cursor 90% of the way down the list, read once from the database (not measured).
    const deep = await t.deps.db
      .selectFrom('deployments')
      .select(['created_at', 'id'])
      .where('project_id', '=', project.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(Math.floor(size * 0.9))
      .limit(1)
      .executeTakeFirstOrThrow();
    const cursor = encodeCursor(deep.created_at, deep.id);
    const failedNext = (await get(t, user, `${base}?status=failed&limit=20`)).meta.next!;
    const cases: [string, string][] = [
      ['deployments, first page', `${base}?limit=20`],
      ['deployments, last page by number', `${base}?limit=20&page=${size / 20}`],
      ['deployments, 90% deep by cursor', `${base}?limit=20&cursor=${cursor}`],
      [
        'deployments, status=failed, 2nd page by cursor',
        `${base}?limit=20&status=failed&cursor=${failedNext}`,
      ],
      ['deployments, branch=feature-7', `${base}?limit=20&branch=feature-7`],
      [
        'deployments, commitHash (7 chars)',
        `${base}?limit=20&commitHash=${hash(Math.floor(size / 2)).slice(0, 7)}`,
      ],
      ['one project (GET /v1/projects/:id)', `/v1/projects/${project.id}`],
    ];
    for (const [query, url] of cases) {
      add(query, size, await time(ROUNDS, () => get(t, user, url).then(() => undefined)), baseline);
    }
  }
}

async function projectLists(t: TestApp, user: User, add: Add) {
  const baseline = new Map<string, number>();
  let made = 1; // 'big' from the deployments' lists
  for (const size of PROJECT_SIZES) {
    const fresh = [];
    for (; made < size; made++) {
      fresh.push(
        projectRow(user.orgId, new Date(BASE + made * 1000).toISOString(), {
          name: `project-${made}`,
          status: made % 20 === 0 ? 'suspended' : 'active',
        }),
      );
    }
    await insertChunks(fresh, (chunk) => t.deps.db.insertInto('projects').values(chunk).execute());
    await analyze(t);
    for (const [query, url] of [
      ['projects, first page', `/v1/projects?org=${user.orgId}&limit=20`],
      ['projects, status=suspended', `/v1/projects?org=${user.orgId}&limit=20&status=suspended`],
    ] as const) {
      add(query, size, await time(ROUNDS, () => get(t, user, url).then(() => undefined)), baseline);
    }
  }
}

async function jobClaims(t: TestApp, add: Add) {
  const baseline = new Map<string, number>();
  const q = t.deps.queue;
  let made = 0;
  for (const size of SIZES) {
    const fresh: Insertable<JobsTable>[] = [];
    for (; made < size; made++) {
      const at = new Date(BASE + made * 1000).toISOString();
      fresh.push({
        id: newId('job'),
        kind: 'build',
        payload: '{}',
        status: made % 10 === 0 ? 'failed' : 'done',
        run_at: at,
        attempts: 1,
        max_attempts: 2,
        lease_until: null,
        locked_by: null,
        last_error: null,
        created_at: at,
        updated_at: at,
      });
    }
    await insertChunks(fresh, (chunk) => t.deps.db.insertInto('jobs').values(chunk).execute());
    await analyze(t);
    const f = await time(ROUNDS, async () => {
      const id = await q.enqueue(t.deps.db, 'bench.claim', {});
      const job = await q.claim(['bench.claim'], 'bench', 60_000);
      if (job?.id !== id) throw new Error('the claim did not return the job just enqueued');
      await q.complete(id, 'bench');
    });
    // The bench's own finished jobs join the pile; the next size counts them in.
    made += ROUNDS + 10;
    add('job: enqueue + claim + complete', size, f, baseline);
  }
}
