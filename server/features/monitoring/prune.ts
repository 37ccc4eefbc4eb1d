import { sql } from 'kysely';
import type { Deps } from '../../platform/deps/deps.ts';

const HOUR = 3_600_000;
/** Health probes are kept 48 hours: `/health` reads 24, the rest is slack for investigations. */
export const HEALTH_RETENTION_MS = 48 * HOUR;
/** Finished runs of periodic jobs are kept a day, for `jobs` table forensics. */
export const PERIODIC_RUN_RETENTION_MS = 24 * HOUR;

/** Rows (about) per DELETE: short transactions, so a backlog never holds SQLite's lock long. */
export const PRUNE_BATCH = 1000;

type TimedTable = 'health_checks' | 'runtime_samples';

/**
 * Deletes the rows of `table` whose `column` is before `before`, oldest first, in statements of
 * about {@link PRUNE_BATCH} rows: each finds the time of the batch's last row through the column's
 * index, then deletes the range up to it (rows sharing that time go together). Returns the count.
 */
export async function deleteOlderThan(
  db: Deps['db'],
  table: TimedTable,
  column: 'at' | 'minute',
  before: string,
): Promise<number> {
  let total = 0;
  for (;;) {
    const time = sql.ref<string>(column);
    const edge = await db
      .selectFrom(table)
      .select(time.as('t'))
      .where(time, '<', before)
      .orderBy(time)
      .limit(1)
      .offset(PRUNE_BATCH - 1)
      .executeTakeFirst();
    const res = await db
      .deleteFrom(table)
      .where(time, edge ? '<=' : '<', edge ? edge.t : before)
      .executeTakeFirst();
    total += Number(res.numDeletedRows);
    if (!edge) return total;
  }
}

export interface Pruned {
  healthChecks: number;
  /** Traffic rollups of every span (with their status counts). */
  rollups: number;
  /** Runtime samples of every span. */
  runtimeSamples: number;
  periodicRuns: number;
}

/**
 * Deletes monitoring data past its retention: health checks after 48 hours, in batches through
 * their time index, and traffic and runtime rollups per span after
 * `SLIPWAY_METRICS_{MINUTE,HOUR,DAY}_RETENTION`. Raw request records never reach the database
 * (the edge sums them per minute in memory), so the oldest raw data are the health probes.
 */
export async function pruneMonitoringData(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'metrics'>,
  periodicKinds: readonly string[] = [],
): Promise<Pruned> {
  const now = deps.clock.now().getTime();
  const before = (ms: number) => new Date(now - ms).toISOString();
  const healthChecks = await deleteOlderThan(deps.db, 'health_checks', 'at', before(HEALTH_RETENTION_MS));
  const { minuteMs, hourMs, dayMs } = deps.config.metricsRetention;
  let rollups = 0;
  let runtimeSamples = 0;
  for (const [span, ms] of [
    ['minute', minuteMs],
    ['hour', hourMs],
    ['day', dayMs],
  ] as const) {
    // Each delete is one range of the (span, bucket_start) index.
    await deps.db
      .deleteFrom('traffic_status_counts')
      .where('span', '=', span)
      .where('bucket_start', '<', before(ms))
      .execute();
    const traffic = await deps.db
      .deleteFrom('traffic_rollups')
      .where('span', '=', span)
      .where('bucket_start', '<', before(ms))
      .executeTakeFirst();
    rollups += Number(traffic.numDeletedRows);
    const samples =
      span === 'minute'
        ? await deleteOlderThan(deps.db, 'runtime_samples', 'minute', before(ms))
        : Number(
            (
              await deps.db
                .deleteFrom('runtime_rollups')
                .where('span', '=', span)
                .where('bucket_start', '<', before(ms))
                .executeTakeFirst()
            ).numDeletedRows,
          );
    runtimeSamples += samples;
  }
  deps.metrics.rollupsChanged();
  let periodicRuns = 0;
  if (periodicKinds.length > 0) {
    const res = await deps.db
      .deleteFrom('jobs')
      .where('kind', 'in', periodicKinds)
      .where('status', 'in', ['done', 'failed'])
      .where('updated_at', '<', before(PERIODIC_RUN_RETENTION_MS))
      .executeTakeFirst();
    periodicRuns = Number(res.numDeletedRows);
  }
  return { healthChecks, rollups, runtimeSamples, periodicRuns };
}
