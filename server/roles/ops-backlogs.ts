import { sql } from 'kysely';
import { Gauge, type Registry } from 'prom-client';
import type { Deps } from '../platform/deps/deps.ts';
import { GITHUB_EVENT_JOB } from '../features/github/index.ts';
import { DELIVERY_JOB } from '../features/webhooks/index.ts';
import type { PoolStats } from '../platform/store/db.ts';
import type { OpsMetrics } from '../platform/ops-metrics/ops-metrics.ts';

type BacklogDeps = Pick<Deps, 'db' | 'clock'> & { store: { poolStats(): PoolStats | null } };

interface JobRow {
  kind: string;
  status: string;
  n: number | string;
  oldest: string | null;
}

/** Seconds since `iso`, never negative; 0 without one. */
const ageOf = (iso: string | null | undefined, nowMs: number) =>
  iso ? Math.max(0, (nowMs - Date.parse(iso)) / 1000) : 0;

const gauge = (registry: Registry, name: string, help: string, labelNames: string[] = []) =>
  new Gauge({ name, help, labelNames, registers: [registry] });

/**
 * The database's backlogs, read at each scrape: jobs waiting by kind (builds are
 * `deployment.build`) and the oldest one's wait, jobs running, webhook deliveries waiting (jobs of kind `webhook.deliver`, counted among the jobs too), the
 * GitHub App's events waiting, and this process's pool. One query each, on indexes that lead with
 * the status. Every process on the same database reports the same backlogs: aggregate them with
 * max(), not sum().
 */
export function registerBacklogs(ops: OpsMetrics, deps: BacklogDeps): void {
  registerJobs(ops, deps);
  registerPending(ops, deps, {
    kind: DELIVERY_JOB,
    scrape: 'webhook_deliveries',
    name: 'slipway_webhook_deliveries_pending',
    help: 'Webhook deliveries not yet delivered (waiting for their first try or a retry).',
    ageName: 'slipway_webhook_deliveries_oldest_pending_seconds',
    ageHelp: 'Age of the oldest webhook delivery not yet delivered.',
  });
  registerPending(ops, deps, {
    kind: GITHUB_EVENT_JOB,
    scrape: 'github_events',
    name: 'slipway_github_events_pending',
    help: 'GitHub App events received and not yet handled by the App (its durable queue).',
    ageName: 'slipway_github_events_oldest_pending_seconds',
    ageHelp: 'Age of the oldest GitHub App event not yet handled.',
  });
  if (deps.store.poolStats() === null) return;
  registerPool(ops, deps);
}

/** Jobs waiting by kind and the oldest one's wait, and jobs running. */
function registerJobs(ops: OpsMetrics, deps: BacklogDeps): void {
  const r = ops.registry;
  const queued = gauge(
    r,
    'slipway_jobs_queued',
    'Jobs due and waiting for a worker, by kind (deployment.build: the build queue).',
    ['kind'],
  );
  const oldest = gauge(
    r,
    'slipway_jobs_oldest_queued_seconds',
    'How long the oldest due job of each kind has waited for a worker.',
    ['kind'],
  );
  const running = gauge(r, 'slipway_jobs_running', 'Jobs running on a worker, by kind.', ['kind']);
  ops.onScrape('jobs', async () => {
    const now = deps.clock.now();
    // Queued jobs count once they are due (retries and periodic runs wait for their time).
    const rows = (await deps.db
      .selectFrom('jobs')
      .select(['kind', 'status', sql<number>`count(*)`.as('n'), sql<string | null>`min(run_at)`.as('oldest')])
      .where(sql<boolean>`status in ('queued', 'running')`)
      .where((eb) => eb.or([eb('status', '=', 'running'), eb('run_at', '<=', now.toISOString())]))
      .groupBy(['kind', 'status'])
      .execute()) as JobRow[];
    for (const g of [queued, oldest, running]) g.reset();
    for (const row of rows) {
      if (row.status === 'running') running.set({ kind: row.kind }, Number(row.n));
      else {
        queued.set({ kind: row.kind }, Number(row.n));
        oldest.set({ kind: row.kind }, ageOf(row.oldest, now.getTime()));
      }
    }
  });
}

/** The jobs of one kind not yet done (queued or running), and the oldest one's age. */
function registerPending(
  ops: OpsMetrics,
  deps: BacklogDeps,
  m: { kind: string; scrape: string; name: string; help: string; ageName: string; ageHelp: string },
): void {
  const pending = gauge(ops.registry, m.name, m.help);
  const age = gauge(ops.registry, m.ageName, m.ageHelp);
  ops.onScrape(m.scrape, async () => {
    pending.reset();
    age.reset();
    const row = await deps.db
      .selectFrom('jobs')
      .select([sql<number>`count(*)`.as('n'), sql<string | null>`min(created_at)`.as('oldest')])
      .where(sql<boolean>`status in ('queued', 'running')`)
      .where('kind', '=', m.kind)
      .executeTakeFirst();
    pending.set(Number(row?.n ?? 0));
    age.set(ageOf(row?.oldest, deps.clock.now().getTime()));
  });
}

/** This process's PostgreSQL pool. */
function registerPool(ops: OpsMetrics, deps: BacklogDeps): void {
  const pool = gauge(
    ops.registry,
    'slipway_db_pool_connections',
    "This process's PostgreSQL pool: connections in_use and idle, queries waiting for one, and max (SLIPWAY_DB_POOL_SIZE).",
    ['state'],
  );
  ops.onScrape('db_pool', () => {
    const p = deps.store.poolStats()!;
    pool.set({ state: 'in_use' }, p.total - p.idle);
    pool.set({ state: 'idle' }, p.idle);
    pool.set({ state: 'waiting' }, p.waiting);
    pool.set({ state: 'max' }, p.max);
  });
}
