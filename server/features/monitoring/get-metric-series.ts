import type { MetricPoint, MetricSeries, MetricsPeriod } from '../../../api/schemas/monitoring.ts';
import { LATENCY_COLUMNS, percentile } from '../../core/histogram.ts';
import type { RollupSpan } from '../../platform/store/schema.ts';
import { requireProject } from '../identity/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { PERIOD_MS } from './get-metrics.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The rollup a period is drawn from: 61 minutes, 25 or 169 hours, 31 days. */
export const SERIES_SPAN: Record<MetricsPeriod, { span: RollupSpan; ms: number }> = {
  '1h': { span: 'minute', ms: MINUTE },
  '24h': { span: 'hour', ms: HOUR },
  '7d': { span: 'hour', ms: HOUR },
  '30d': { span: 'day', ms: DAY },
};

/**
 * A project's traffic over a period as a time series, one point per minute (1h), hour (24h, 7d)
 * or day (30d), read from the same rollups as the totals (the edge's counts, never invented).
 * The first and last buckets may be partial: the period starts and ends inside them.
 */
export async function getMetricSeries(
  deps: Deps,
  actor: Actor,
  projectId: string,
  period: MetricsPeriod,
): Promise<MetricSeries> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const { span, ms } = SERIES_SPAN[period];
  const now = deps.clock.now().getTime();
  const first = Math.floor((now - PERIOD_MS[period]) / ms) * ms;
  const last = Math.floor(now / ms) * ms;
  const rows = await deps.db
    .selectFrom('traffic_rollups')
    .select(['bucket_start', 'requests', 'errors', 'bytes', 'latency_sum_ms', ...LATENCY_COLUMNS])
    .where('project_id', '=', project.id)
    .where('span', '=', span)
    .where('bucket_start', '>=', new Date(first).toISOString())
    .where('bucket_start', '<=', new Date(last).toISOString())
    .orderBy('bucket_start')
    .execute();
  // PostgreSQL answers bigint columns as strings: Number() reads both.
  const byStart = new Map(rows.map((r) => [Date.parse(r.bucket_start), r]));
  const points: MetricPoint[] = [];
  for (let t = first; t <= last; t += ms) {
    const r = byStart.get(t);
    const requests = Number(r?.requests ?? 0);
    points.push({
      at: new Date(t).toISOString(),
      requests,
      errors: Number(r?.errors ?? 0),
      bytes: Number(r?.bytes ?? 0),
      latencyAvg: r && requests > 0 ? Math.round((Number(r.latency_sum_ms) / requests) * 100) / 100 : null,
      latencyP95:
        r && requests > 0
          ? percentile(
              LATENCY_COLUMNS.map((c) => Number(r[c])),
              95,
            )
          : null,
    });
  }
  return { period, span, points };
}
