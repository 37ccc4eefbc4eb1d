import type { Deps } from '../services/deps.ts';
import { rollupsChanged } from '../services/monitoring/metrics-cache.ts';

const HOUR = 3_600_000;
/** Health probes are kept 48 hours: `/health` reads 24, the rest is slack for investigations. */
export const HEALTH_RETENTION_MS = 48 * HOUR;
/** Finished runs of periodic jobs are kept a day, for `jobs` table forensics. */
export const PERIODIC_RUN_RETENTION_MS = 24 * HOUR;

export interface Pruned {
  healthChecks: number;
  /** Traffic rollups of every span (with their status counts). */
  rollups: number;
  /** Runtime samples of every span. */
  runtimeSamples: number;
  periodicRuns: number;
}

/**
 * Deletes monitoring data past its retention: traffic and runtime rollups per span after
 * `SLIPWAY_METRICS_{MINUTE,HOUR,DAY}_RETENTION`. Raw request records never reach the database
 * (the edge sums them per minute in memory), so the oldest raw data are the health probes.
 */
export async function pruneMonitoringData(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  periodicKinds: readonly string[] = [],
): Promise<Pruned> {
  const now = deps.clock.now().getTime();
  const before = (ms: number) => new Date(now - ms).toISOString();
  const health = await deps.db
    .deleteFrom('health_checks')
    .where('at', '<', before(HEALTH_RETENTION_MS))
    .executeTakeFirst();
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
        ? await deps.db.deleteFrom('runtime_samples').where('minute', '<', before(ms)).executeTakeFirst()
        : await deps.db
            .deleteFrom('runtime_rollups')
            .where('span', '=', span)
            .where('bucket_start', '<', before(ms))
            .executeTakeFirst();
    runtimeSamples += Number(samples.numDeletedRows);
  }
  rollupsChanged(deps.db);
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
  return {
    healthChecks: Number(health.numDeletedRows),
    rollups,
    runtimeSamples,
    periodicRuns,
  };
}
