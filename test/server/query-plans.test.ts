import { CompiledQuery, sql, type Kysely, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver } from '../../server/features/serving/edge/resolve-host.ts';
import { createJobQueue } from '../../server/platform/queue/queue.ts';
import { pruneFinishedJobs } from '../../server/schedule/prune-jobs.ts';
import { evaluateDeploymentFailures } from '../../server/features/monitoring/deployment-failed-alert.ts';
import { pruneMonitoringData } from '../../server/features/monitoring/prune.ts';
import { getBilling } from '../../server/features/billing/get-billing.ts';
import { listDeployments } from '../../server/features/deployments/list-deployments.ts';
import type { Actor, Deps } from '../../server/platform/deps/deps.ts';
import { listDomains } from '../../server/features/serving/domains/list-domains.ts';
import { listEnvVars } from '../../server/features/deployments/env/list-env-vars.ts';
import { getMetricSeries } from '../../server/features/monitoring/get-metric-series.ts';
import { listAlerts } from '../../server/features/monitoring/list-alerts.ts';
import { listMembers } from '../../server/features/identity/organizations/list-members.ts';
import { encodeCursor } from '../../server/platform/http/pagination.ts';
import { listProjects } from '../../server/features/deployments/projects/list-projects.ts';
import { listTokens } from '../../server/features/identity/users/list-tokens.ts';
import { listDeliveries } from '../../server/features/webhooks/list-deliveries.ts';
import { listWebhooks } from '../../server/features/webhooks/list-webhooks.ts';
import { listDeployHooks } from '../../server/features/deployments/deploy-hooks/list-deploy-hooks.ts';
import type { Database } from '../../server/platform/store/schema.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { insertDeployment } from '../helpers/edge.ts';

/**
 * The plans of the hot queries, read from the database itself (EXPLAIN of the exact SQL the
 * services send, captured on the way out): each must read its rows in order from the named index,
 * without a scan of the table or a sort of every match, so a change that loses an index fails here
 * on both databases. docs/performance.md#data-growth lists them.
 */
describe(`query plans (${testDialect()})`, () => {
  let t: TestApp;
  let alice: TestUser;
  let actor: Actor;
  let projectId: string;
  let orgId: string;
  let webhookId: string;
  let traced: Deps;
  const seen: CompiledQuery[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    actor = { userId: alice.userId, email: alice.email, tokenId: '' };
    orgId = alice.orgId;
    const project = await t.call(alice, 'POST', '/v1/projects', {
      name: 'plans',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: orgId,
    });
    if (project.status !== 201) throw new Error(JSON.stringify(project.body));
    projectId = project.body.data.id;
    const hook = await t.call(alice, 'POST', `/v1/projects/${projectId}/webhooks`, {
      url: 'https://hooks.example.com/slipway',
      events: ['deployment.success'],
      secret: 'a-webhook-secret-of-some-length',
    });
    if (hook.status !== 201) throw new Error(JSON.stringify(hook.body));
    webhookId = hook.body.data.id;
    const capture: KyselyPlugin = {
      transformQuery(args) {
        seen.push(t.deps.db.getExecutor().compileQuery(args.node, args.queryId));
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    traced = { ...t.deps, db: t.deps.db.withPlugin(capture) };
  });
  afterAll(() => t.close());

  /** The last statement `run` sent that reads `table` in some order. */
  async function captured(table: string, run: () => Promise<unknown>): Promise<CompiledQuery> {
    seen.length = 0;
    await run();
    const q = seen.filter((c) => c.sql.includes(`from "${table}"`) && /order by/i.test(c.sql)).at(-1);
    if (!q) throw new Error(`no ordered read of ${table} among:\n${seen.map((c) => c.sql).join('\n')}`);
    return q;
  }

  async function plan(
    db: Kysely<Database>,
    q: CompiledQuery,
    opts: { sort?: boolean } = {},
  ): Promise<string> {
    if (testDialect() === 'sqlite') {
      const res = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]),
      );
      return res.rows.map((r) => r.detail).join('\n');
    }
    // Tables here are tiny, so PostgreSQL would rightly scan them: forbid the scan and the sort to
    // see whether an index can give the rows in order (an index plan exists, or a sort remains).
    return db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      if (!opts.sort) await sql`set local enable_sort = off`.execute(tx);
      await sql`set local enable_bitmapscan = off`.execute(tx);
      const res = await tx.executeQuery<{ 'QUERY PLAN': string }>(
        CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]),
      );
      return res.rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  /** The plan reads `table` through `index`, in order: no full scan, no sort. */
  async function expectIndexOrder(table: string, index: string, run: () => Promise<unknown>) {
    const text = await plan(t.deps.db, await captured(table, run));
    if (testDialect() === 'sqlite') {
      expect(text, text).toMatch(new RegExp(`(SEARCH|SCAN) ${table} USING (COVERING )?INDEX ${index}\\b`));
      expect(text, text).not.toMatch(/TEMP B-TREE/);
    } else {
      expect(text, text).toMatch(new RegExp(`Index (Only )?Scan( Backward)? using ${index} on ${table}`));
      expect(text, text).not.toMatch(/Seq Scan|\bSort\b(?! Key)|Sort Key/);
    }
  }

  const q = { page: 1, limit: 10 };
  const cursor = encodeCursor('2026-11-01T00:00:00.000Z', 'dpl_zzzzzzzzzzzzzzzzzzzz');

  it('deployments: every filter, by page and by cursor', async () => {
    const list = (extra: object) => () => listDeployments(traced, actor, projectId, { ...q, ...extra });
    await expectIndexOrder('deployments', 'deployments_list', list({}));
    await expectIndexOrder('deployments', 'deployments_list', list({ cursor }));
    await expectIndexOrder('deployments', 'deployments_list_status', list({ status: 'failed', cursor }));
    await expectIndexOrder('deployments', 'deployments_list_target', list({ target: 'preview' }));
    await expectIndexOrder('deployments', 'deployments_list_branch', list({ branch: 'main', cursor }));
  });

  it('deployments by a deep page number: the place kept in list_seq, then the list index', async () => {
    const made = await t.call(alice, 'POST', '/v1/projects', {
      name: 'deep-pages',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: orgId,
    });
    const deep = made.body.data.id as string;
    for (let i = 0; i < 3; i++) await insertDeployment(t, deep, { status: 'live', target: 'preview' });
    const list = (extra: object) => () => listDeployments(traced, actor, deep, { ...q, limit: 1, ...extra });
    await expectIndexOrder('deployments', 'deployments_list', list({ page: 3 }));
    const locate = seen.find((c) => /"list_seq" = /.test(c.sql));
    if (!locate) throw new Error(`no look-up by list_seq among:\n${seen.map((c) => c.sql).join('\n')}`);
    const text = await plan(t.deps.db, locate);
    if (testDialect() === 'sqlite') {
      expect(text, text).toMatch(
        /SEARCH deployments USING INDEX deployments_list_seq \(project_id=\? AND list_seq=\?\)/,
      );
    } else {
      expect(text, text).toMatch(/Index Scan using deployments_list_seq on deployments/);
    }
    // A filtered page past the middle reads its index from the oldest end.
    await expectIndexOrder('deployments', 'deployments_list_status', list({ status: 'live', page: 3 }));
    expect(seen.some((c) => /order by "created_at" asc, "id" asc/.test(c.sql))).toBe(true);
  });

  it('deployments by commit prefix: a range on the commit index', async () => {
    const text = await plan(
      t.deps.db,
      await captured('deployments', () =>
        listDeployments(traced, actor, projectId, { ...q, commitHash: 'abcdef0' }),
      ),
      { sort: true },
    );
    // Only the matches are sorted, never the project's whole history. PostgreSQL weighs this
    // range against reading deployments_list in order by its statistics (on an empty table the
    // ordered read wins); either way an index bounds it to the project.
    if (testDialect() === 'sqlite') {
      expect(text, text).toMatch(
        /SEARCH deployments USING INDEX deployments_commit \(project_id=\? AND commit_hash>\? AND commit_hash<\?\)/,
      );
    } else {
      expect(text, text).toMatch(
        /Index (Only )?Scan( Backward)? using deployments_(commit|list) on deployments/,
      );
      expect(text, text).not.toMatch(/Seq Scan/);
    }
  });

  it('every other list', async () => {
    await expectIndexOrder('projects', 'projects_list', () =>
      listProjects(traced, actor, { ...q, org: orgId }),
    );
    await expectIndexOrder('projects', 'projects_list_status', () =>
      listProjects(traced, actor, { ...q, org: orgId, status: 'suspended' }),
    );
    await expectIndexOrder('domains', 'domains_list', () =>
      listDomains(traced, actor, projectId, { ...q, cursor }),
    );
    await expectIndexOrder('webhooks', 'webhooks_list', () => listWebhooks(traced, actor, projectId, q));
    await expectIndexOrder('deploy_hooks', 'deploy_hooks_project_created', () =>
      listDeployHooks(traced, actor, projectId, { ...q, cursor }),
    );
    await expectIndexOrder('jobs', 'jobs_subject', () =>
      listDeliveries(traced, actor, projectId, webhookId, { ...q, cursor }),
    );
    await expectIndexOrder('alerts', 'alerts_list', () => listAlerts(traced, actor, projectId, q));
    await expectIndexOrder('alerts', 'alerts_list_status', () =>
      listAlerts(traced, actor, projectId, { ...q, status: 'active' }),
    );
    await expectIndexOrder('env_vars', 'env_vars_list', () => listEnvVars(traced, actor, projectId, q));
    await expectIndexOrder('env_vars', 'env_vars_list_environment', () =>
      listEnvVars(traced, actor, projectId, { ...q, environment: 'preview' }),
    );
    await expectIndexOrder('tokens', 'tokens_list', () => listTokens(traced, actor, q));
    await expectIndexOrder('memberships', 'memberships_list', () => listMembers(traced, actor, orgId, q));
    await expectIndexOrder('ledger_entries', 'ledger_entries_list', () =>
      getBilling(traced, actor, orgId, q),
    );
  });

  it('a job claim reads open jobs only; pruning reads finished ones only', async () => {
    const queue = createJobQueue(traced.db, t.deps.store.dialect, t.deps.clock);
    await expectIndexOrder('jobs', 'jobs_open', () => queue.claim(['build'], 'w1', 1000));
    // A fair claim (builds) reads the chosen owner's open jobs oldest first from their own index.
    await queue.enqueue(t.deps.db, 'fair', {}, { fairKey: 'org_x' });
    const unlimited = { limits: async (_db: unknown, keys: string[]) => new Map(keys.map((k) => [k, null])) };
    await expectIndexOrder('jobs', 'jobs_open_owner', () => queue.claim(['fair'], 'w1', 1000, unlimited));
    // A claim through the API (the GitHub App's events) reads the caller's open jobs in order.
    await queue.enqueue(t.deps.db, 'owned', {}, { ownerUserId: alice.userId, orderingKey: 'k' });
    await expectIndexOrder('jobs', 'jobs_open_user', () =>
      queue.claim(['owned'], 'w1', 1000, undefined, { ownerUserId: alice.userId }),
    );
    seen.length = 0;
    await pruneFinishedJobs(traced);
    const prune = seen.find((c) => /^delete from "jobs"/.test(c.sql));
    const text = await plan(t.deps.db, prune!);
    if (testDialect() === 'sqlite')
      expect(text, text).toMatch(/SEARCH jobs USING (COVERING )?INDEX jobs_finished \(updated_at<\?\)/);
    else expect(text, text).toMatch(/Index (Only )?Scan using jobs_finished on jobs/);
  });

  it('the deployment_failed rule reads recent failed production deployments through a partial index', async () => {
    // A recent failure, so the rule also reads that project's latest failed deployment.
    await insertDeployment(t, projectId, { status: 'failed', target: 'production' });
    seen.length = 0;
    await evaluateDeploymentFailures(traced);
    const recent = seen.find((c) =>
      /select "project_id" from "deployments" where status = 'failed'/.test(c.sql),
    );
    const latest = seen.find((c) => /from "deployments" where "project_id" = /.test(c.sql));
    const recentPlan = await plan(t.deps.db, recent!, { sort: true });
    const latestPlan = await plan(t.deps.db, latest!, { sort: true });
    if (testDialect() === 'sqlite') {
      expect(recentPlan, recentPlan).toMatch(
        /SEARCH deployments USING COVERING INDEX deployments_failed_production \(updated_at>\?\)/,
      );
      // Only that project's deployments are read, through one of its list indexes.
      expect(latestPlan, latestPlan).toMatch(/SEARCH deployments USING INDEX \w+ \(project_id=\?/);
    } else {
      expect(recentPlan, recentPlan).toMatch(
        /Index (Only )?Scan using deployments_failed_production on deployments/,
      );
      expect(latestPlan, latestPlan).toMatch(/Index Scan( Backward)? using deployments_\w+ on deployments/);
      for (const text of [recentPlan, latestPlan]) expect(text, text).not.toMatch(/Seq Scan/);
    }
  });

  it('pruning deletes monitoring data by ranges of its time index', async () => {
    await expectIndexOrder('health_checks', 'health_checks_at', () => pruneMonitoringData(traced));
    await expectIndexOrder('runtime_samples', 'runtime_samples_minute', () => pruneMonitoringData(traced));
    seen.length = 0;
    await pruneMonitoringData(traced);
    const del = seen.find((c) => /^delete from "health_checks"/.test(c.sql));
    const text = await plan(t.deps.db, del!);
    if (testDialect() === 'sqlite')
      expect(text, text).toMatch(/SEARCH health_checks USING (COVERING )?INDEX health_checks_at \(at<\?\)/);
    else expect(text, text).toMatch(/Index (Only )?Scan using health_checks_at on health_checks/);
    // Traffic rollups go span by span, each a range of (span, bucket_start).
    const traffic = seen.find((c) => /^delete from "traffic_rollups"/.test(c.sql));
    const trafficPlan = await plan(t.deps.db, traffic!);
    if (testDialect() === 'sqlite')
      expect(trafficPlan, trafficPlan).toMatch(
        /SEARCH traffic_rollups USING (COVERING )?INDEX traffic_rollups_age \(span=\? AND bucket_start<\?\)/,
      );
    else
      expect(trafficPlan, trafficPlan).toMatch(
        /Index (Only )?Scan using traffic_rollups_age on traffic_rollups/,
      );
  });

  it("the dashboard's metrics series reads one project's rows of one span by a range of its key, in order", async () => {
    const text = await plan(
      t.deps.db,
      await captured('traffic_rollups', () => getMetricSeries(traced, actor, projectId, '7d')),
    );
    if (testDialect() === 'sqlite') {
      expect(text, text).toMatch(
        /SEARCH traffic_rollups USING (COVERING )?INDEX \S+ \(project_id=\? AND span=\? AND bucket_start>\? AND bucket_start<\?\)/,
      );
      expect(text, text).not.toMatch(/TEMP B-TREE/);
    } else {
      expect(text, text).toMatch(/Index (Only )?Scan using \S+ on traffic_rollups/);
      expect(text, text).not.toMatch(/Seq Scan|Sort Key/);
    }
  });

  it("the edge's look-up of a service label reads both meanings by their host indexes", async () => {
    seen.length = 0;
    await createHostResolver(traced, { ttlMs: 0 }).resolve(`plans-label.${t.deps.config.domain}`);
    const q = seen.find((c) => /union all/i.test(c.sql));
    expect(q, seen.map((c) => c.sql).join('\n')).toBeDefined();
    if (testDialect() === 'sqlite') {
      const text = await plan(t.deps.db, q!, { sort: true });
      expect(text, text).toMatch(/SEARCH p USING INDEX projects_production_host \(production_host=\?\)/);
      expect(text, text).toMatch(/SEARCH d USING INDEX sqlite_autoindex_deployments_\d \(host=\?\)/);
      expect(text, text).not.toMatch(/SCAN (p|d|src)\b/);
    } else {
      // With a handful of projects every index costs PostgreSQL the same; with 2,000 (rolled
      // back after) it weighs them as it would in service.
      let text = '';
      const rollback = new Error('rolled back');
      await t.deps.db
        .transaction()
        .execute(async (tx) => {
          await sql`
          insert into projects (id, organization_id, name, repository_url, branch, status, production_host, created_at, updated_at)
          select 'prj_plan_' || i, ${orgId}, 'plan-' || i, 'https://example.com/r.git', 'main', 'active',
            'plan-' || i, '2026-11-26', '2026-11-26'
          from generate_series(1, 2000) i`.execute(tx);
          await sql`analyze projects`.execute(tx);
          const res = await tx.executeQuery<{ 'QUERY PLAN': string }>(
            CompiledQuery.raw(`explain ${q!.sql}`, [...q!.parameters]),
          );
          text = res.rows.map((r) => r['QUERY PLAN']).join('\n');
          throw rollback;
        })
        .catch((err: unknown) => {
          if (err !== rollback) throw err;
        });
      expect(text, text).toMatch(/Index Scan using projects_production_host on projects p\b/);
      expect(text, text).toMatch(/Index Scan using deployments_host_key on deployments d/);
      expect(text, text).not.toMatch(/Seq Scan/);
    }
  });
});
