import type { MetricName, Metrics, MetricsPeriod, MetricsQuery } from '../../../api/schemas/monitoring.ts';
import { mergeHistograms, parseHistogram, percentile } from '../../monitoring/histogram.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { mergeStatusCounts, parseStatusCounts } from './record-requests.ts';

const HOUR = 3_600_000;

export const PERIOD_MS: Record<MetricsPeriod, number> = {
  '1h': HOUR,
  '24h': 24 * HOUR,
  '7d': 7 * 24 * HOUR,
  '30d': 30 * 24 * HOUR,
};

/** Every metric; `cpu` and `ram` are answered only when the period has samples of them. */
const ALL: readonly MetricName[] = ['requests', 'errors', 'latency', 'bandwidth', 'cpu', 'ram'];

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Traffic of the minutes that started within the period (`now - period <= minute <= now`).
 * Totals are exact sums of the per-minute rows; percentiles come from the merged histograms.
 * CPU and memory come from the runtime samples of the same minutes.
 */
export async function getMetrics(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: MetricsQuery,
): Promise<Metrics> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const now = deps.clock.now();
  const since = new Date(now.getTime() - PERIOD_MS[q.period]).toISOString();
  const wanted = new Set(q.metric ? [q.metric] : ALL);
  const rows = deps.db
    .selectFrom('request_rollups')
    .where('project_id', '=', project.id)
    .where('minute', '>=', since)
    .where('minute', '<=', now.toISOString());

  // SUM over no rows is NULL, and PostgreSQL returns bigint sums as strings: Number() covers both.
  const sums = await rows
    .select((eb) => [
      eb.fn.sum<string | number | null>('requests').as('requests'),
      eb.fn.sum<string | number | null>('success').as('success'),
      eb.fn.sum<string | number | null>('errors').as('errors'),
      eb.fn.sum<string | number | null>('bytes').as('bytes'),
      eb.fn.sum<string | number | null>('latency_sum_ms').as('latency_sum_ms'),
    ])
    .executeTakeFirstOrThrow();
  const requests = Number(sums.requests ?? 0);
  const errors = Number(sums.errors ?? 0);

  const metrics: Metrics['metrics'] = {};
  if (wanted.has('requests')) {
    metrics.requests = { total: requests, success: Number(sums.success ?? 0), errors };
  }
  if (wanted.has('errors')) {
    const counts = await rows.select('status_counts').where('errors', '>', 0).execute();
    metrics.errors = {
      total: errors,
      rate: requests === 0 ? 0 : round2((errors / requests) * 100),
      byStatus: mergeStatusCounts(...counts.map((r) => parseStatusCounts(r.status_counts))),
    };
  }
  if (wanted.has('latency')) {
    const hists = await rows.select('latency_hist').where('requests', '>', 0).execute();
    const hist = mergeHistograms(...hists.map((r) => parseHistogram(r.latency_hist)));
    metrics.latency = {
      avg: requests === 0 ? 0 : round2(Number(sums.latency_sum_ms ?? 0) / requests),
      p50: percentile(hist, 50),
      p95: percentile(hist, 95),
      p99: percentile(hist, 99),
    };
  }
  if (wanted.has('bandwidth')) {
    metrics.bandwidth = { total: Number(sums.bytes ?? 0), unit: 'bytes' };
  }
  if (wanted.has('cpu') || wanted.has('ram')) {
    Object.assign(metrics, await runtimeMetrics(deps, project.id, since, now.toISOString(), wanted));
  }
  return { period: q.period, metrics };
}

/**
 * CPU and memory of the project's server processes, from the edge's samples in the period:
 * averages over every sample, maxima of single samples. Nothing (rather than zeros) when the
 * period has no sample, as for static sites.
 */
async function runtimeMetrics(
  deps: Deps,
  projectId: string,
  since: string,
  until: string,
  wanted: Set<MetricName>,
): Promise<Pick<Metrics['metrics'], 'cpu' | 'ram'>> {
  const row = await deps.db
    .selectFrom('runtime_samples')
    .where('project_id', '=', projectId)
    .where('minute', '>=', since)
    .where('minute', '<=', until)
    .select((eb) => [
      eb.fn.sum<string | number | null>('samples').as('samples'),
      eb.fn.sum<string | number | null>('cpu_sum').as('cpu_sum'),
      eb.fn.max<string | number | null>('cpu_max').as('cpu_max'),
      eb.fn.sum<string | number | null>('ram_sum').as('ram_sum'),
      eb.fn.max<string | number | null>('ram_max').as('ram_max'),
    ])
    .executeTakeFirstOrThrow();
  const samples = Number(row.samples ?? 0);
  if (samples === 0) return {};
  const out: Pick<Metrics['metrics'], 'cpu' | 'ram'> = {};
  if (wanted.has('cpu')) {
    out.cpu = {
      avg: round2(Number(row.cpu_sum) / samples / 100),
      max: round2(Number(row.cpu_max) / 100),
    };
  }
  if (wanted.has('ram')) {
    out.ram = { avg: Math.round(Number(row.ram_sum) / samples), max: Number(row.ram_max), unit: 'bytes' };
  }
  return out;
}
