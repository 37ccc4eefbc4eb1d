import type { ExpressionBuilder, Kysely } from 'kysely';
import { LATENCY_COLUMNS } from '../../core/histogram.ts';
import type { SpanRange } from './rollup-ranges.ts';
import type { Database, RollupSpan } from '../../platform/store/schema.ts';
import { prepared, type PreparedStatement } from '../../platform/store/prepared.ts';

/**
 * The reads of a metrics answer as prepared statements (server/platform/store/prepared.ts): built and
 * compiled once per shape of period, then only bound and run. A shape is the spans of the
 * period's ranges in order (`rollupRanges`: at most minute, hour, day, hour, minute, so a few
 * dozen shapes in all); its parameters are the project and each range's bounds. On SQLite they
 * run synchronously without Kysely's driver, on PostgreSQL as named statements: an uncached
 * 30-day answer costs the event loop its rows, not the query builder.
 */

/** Parameters of a shape's statement: the project, then `from`, `to` of each range. */
type RangeParams = string[];

export const TOTALS = ['requests', 'success', 'errors', 'bytes', 'latency_sum_ms'] as const;

type Sums = Record<string, string | number | null>;
type StatusCount = { status: number; count: string | number };
type RuntimeSums = {
  samples: unknown;
  cpu_sum: unknown;
  cpu_max: unknown;
  ram_sum: unknown;
  ram_max: unknown;
};

/** `(project_id, span, bucket_start)` ranges: each an index range of the rollup table's primary key. */
function inRanges(spans: readonly RollupSpan[], [projectId, ...bounds]: string[]) {
  return (eb: ExpressionBuilder<Database, 'traffic_rollups' | 'traffic_status_counts' | 'runtime_rollups'>) =>
    eb.or(
      spans.map((span, i) =>
        eb.and([
          eb('project_id', '=', projectId!),
          eb('span', '=', span),
          eb('bucket_start', '>=', bounds[2 * i]!),
          eb('bucket_start', '<', bounds[2 * i + 1]!),
        ]),
      ),
    );
}

const runtimeSums = (eb: ExpressionBuilder<Database, 'runtime_samples' | 'runtime_rollups'>) => [
  eb.fn.sum('samples').as('samples'),
  eb.fn.sum('cpu_sum').as('cpu_sum'),
  eb.fn.max('cpu_max').as('cpu_max'),
  eb.fn.sum('ram_sum').as('ram_sum'),
  eb.fn.max('ram_max').as('ram_max'),
];

const declared = new Map<string, PreparedStatement<RangeParams, unknown>>();

/** The one declaration of a statement per key: the set a store compiles stays the set of shapes. */
function once<R>(key: string, arity: number, build: (d: Kysely<Database>, p: string[]) => unknown) {
  let statement = declared.get(key);
  if (!statement) {
    statement = prepared<RangeParams, unknown>(arity, (d, ...p) => build(d, p) as never);
    declared.set(key, statement);
  }
  return statement as PreparedStatement<RangeParams, R>;
}

const shapeOf = (ranges: readonly SpanRange[]) => ranges.map((r) => r.span);
const paramsOf = (projectId: string, ranges: readonly SpanRange[]) => [
  projectId,
  ...ranges.flatMap((r) => [r.from, r.to]),
];

export interface MetricsRead<R> {
  statement: PreparedStatement<RangeParams, R>;
  params: RangeParams;
}

/** Sums of the traffic totals (and the latency histogram when `latency`) over `ranges`. */
export function trafficSums(
  projectId: string,
  ranges: readonly SpanRange[],
  latency: boolean,
): MetricsRead<Sums> {
  const spans = shapeOf(ranges);
  const columns = [...TOTALS, ...(latency ? LATENCY_COLUMNS : [])];
  return {
    statement: once<Sums>(`sums:${latency}:${spans.join(',')}`, 1 + 2 * spans.length, (d, p) =>
      d
        .selectFrom('traffic_rollups')
        .where(inRanges(spans, p))
        .select((eb) => columns.map((c) => eb.fn.sum<string | number | null>(c).as(c))),
    ),
    params: paramsOf(projectId, ranges),
  };
}

/** Error responses by status over `ranges`. */
export function statusCounts(projectId: string, ranges: readonly SpanRange[]): MetricsRead<StatusCount> {
  const spans = shapeOf(ranges);
  return {
    statement: once<StatusCount>(`statuses:${spans.join(',')}`, 1 + 2 * spans.length, (d, p) =>
      d
        .selectFrom('traffic_status_counts')
        .where(inRanges(spans, p))
        .select((eb) => ['status', eb.fn.sum<string | number>('count').as('count')])
        .groupBy('status')
        .orderBy('status'),
    ),
    params: paramsOf(projectId, ranges),
  };
}

/** CPU and memory sums of the minute ranges, from the per-deployment samples. */
export function runtimeMinuteSums(
  projectId: string,
  minutes: readonly SpanRange[],
): MetricsRead<RuntimeSums> {
  return {
    statement: once<RuntimeSums>(
      `runtime-minutes:${minutes.length}`,
      1 + 2 * minutes.length,
      (d, [id, ...b]) =>
        d
          .selectFrom('runtime_samples')
          .where((eb) =>
            eb.or(
              minutes.map((_, i) =>
                eb.and([
                  eb('project_id', '=', id!),
                  eb('minute', '>=', b[2 * i]!),
                  eb('minute', '<', b[2 * i + 1]!),
                ]),
              ),
            ),
          )
          .select(runtimeSums),
    ),
    params: paramsOf(projectId, minutes),
  };
}

/** CPU and memory sums of the hour and day ranges, from the runtime rollups. */
export function runtimeRollupSums(projectId: string, longer: readonly SpanRange[]): MetricsRead<RuntimeSums> {
  const spans = shapeOf(longer);
  return {
    statement: once<RuntimeSums>(`runtime-rollups:${spans.join(',')}`, 1 + 2 * spans.length, (d, p) =>
      d.selectFrom('runtime_rollups').where(inRanges(spans, p)).select(runtimeSums),
    ),
    params: paramsOf(projectId, longer),
  };
}
