import type { MetricName, Metrics, MetricsPeriod, MetricsQuery } from '../../../api/schemas/monitoring.ts';
import { LATENCY_COLUMNS, percentile } from '../../core/histogram.ts';
import { rollupRanges, type SpanRange } from './rollup-ranges.ts';
import { requireProject } from '../identity/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import {
  runtimeMinuteSums,
  runtimeRollupSums,
  statusCounts,
  trafficSums,
  type MetricsRead,
} from './metrics-statements.ts';

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

/** Runs one of the metrics reads (server/features/monitoring/metrics-statements.ts). */
const read = <R>(deps: Pick<Deps, 'store'>, { statement, params }: MetricsRead<R>) =>
  deps.store.run(statement, ...params);

/**
 * Traffic of the minutes that started within the period (`now - period <= minute <= now`), from
 * the fewest minute, hour and day rollups that cover them (`rollupRanges`; periods longer than
 * the per-minute retention start at the top of their first hour). Totals are exact sums and
 * percentiles come from the summed histogram columns, all added up by the database: nothing is
 * parsed per row. CPU and memory come from the runtime samples of the same minutes. Answers
 * are reused for a second (`deps.metrics`, server/platform/deps/metrics-cache.ts), so a client polling in a loop does not take the
 * event loop from the edge.
 */
export async function getMetrics(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: MetricsQuery,
): Promise<Metrics> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const now = deps.clock.now().getTime();
  const ranges = rollupRanges(now - PERIOD_MS[q.period], now, deps.config.metricsRetention.minuteMs);
  const key = JSON.stringify([project.id, q.metric ?? null, ranges]);
  const metrics = await deps.metrics.get(key, () =>
    computeMetrics(deps, project.id, ranges, new Set(q.metric ? [q.metric] : ALL)),
  );
  return { period: q.period, metrics };
}

/** The metrics of one project over `ranges`, from the database. */
async function computeMetrics(
  deps: Deps,
  projectId: string,
  ranges: readonly SpanRange[],
  wanted: Set<MetricName>,
): Promise<Metrics['metrics']> {
  const metrics: Metrics['metrics'] = {};
  if (ranges.length === 0) return metrics;
  // SUM over no rows is NULL, and PostgreSQL returns bigint sums as strings: Number() covers both.
  const [sums] = await read(deps, trafficSums(projectId, ranges, wanted.has('latency')));
  const total = (c: string) => Number(sums?.[c] ?? 0);
  const requests = total('requests');
  const errors = total('errors');

  if (wanted.has('requests')) {
    metrics.requests = { total: requests, success: total('success'), errors };
  }
  if (wanted.has('errors')) {
    const byStatus: Record<string, number> = {};
    if (errors > 0) {
      const counts = await read(deps, statusCounts(projectId, ranges));
      for (const c of counts) byStatus[String(c.status)] = Number(c.count);
    }
    metrics.errors = {
      total: errors,
      rate: requests === 0 ? 0 : round2((errors / requests) * 100),
      byStatus,
    };
  }
  if (wanted.has('latency')) {
    const hist = LATENCY_COLUMNS.map(total);
    metrics.latency = {
      avg: requests === 0 ? 0 : round2(total('latency_sum_ms') / requests),
      p50: percentile(hist, 50),
      p95: percentile(hist, 95),
      p99: percentile(hist, 99),
    };
  }
  if (wanted.has('bandwidth')) {
    metrics.bandwidth = { total: total('bytes'), unit: 'bytes' };
  }
  if (wanted.has('cpu') || wanted.has('ram')) {
    Object.assign(metrics, await runtimeMetrics(deps, projectId, ranges, wanted));
  }
  return metrics;
}

/**
 * CPU and memory of the project's server processes, from the edge's samples in the period:
 * averages over every sample, maxima of single samples. Minutes come from `runtime_samples`
 * (one row per deployment), hours and days from `runtime_rollups`. Nothing (rather than zeros)
 * when the period has no sample, as for static sites.
 */
async function runtimeMetrics(
  deps: Deps,
  projectId: string,
  ranges: readonly SpanRange[],
  wanted: Set<MetricName>,
): Promise<Pick<Metrics['metrics'], 'cpu' | 'ram'>> {
  const minutes = ranges.filter((r) => r.span === 'minute');
  const longer = ranges.filter((r) => r.span !== 'minute');
  const parts = [
    ...(minutes.length > 0 ? await read(deps, runtimeMinuteSums(projectId, minutes)) : []),
    ...(longer.length > 0 ? await read(deps, runtimeRollupSums(projectId, longer)) : []),
  ];
  const n = (v: unknown) => Number(v ?? 0);
  const samples = parts.reduce((a, p) => a + n(p.samples), 0);
  if (samples === 0) return {};
  const cpuSum = parts.reduce((a, p) => a + n(p.cpu_sum), 0);
  const cpuMax = Math.max(...parts.map((p) => n(p.cpu_max)));
  const ramSum = parts.reduce((a, p) => a + n(p.ram_sum), 0);
  const ramMax = Math.max(...parts.map((p) => n(p.ram_max)));
  const out: Pick<Metrics['metrics'], 'cpu' | 'ram'> = {};
  if (wanted.has('cpu')) {
    out.cpu = { avg: round2(cpuSum / samples / 100), max: round2(cpuMax / 100) };
  }
  if (wanted.has('ram')) {
    out.ram = { avg: Math.round(ramSum / samples), max: ramMax, unit: 'bytes' };
  }
  return out;
}
