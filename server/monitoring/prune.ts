import type { Deps } from '../services/deps.ts';

const HOUR = 3_600_000;
/** Health probes are kept 48 hours: `/health` reads 24, the rest is slack for investigations. */
export const HEALTH_RETENTION_MS = 48 * HOUR;
/** Per-minute traffic and runtime samples are kept 30 days, the longest metrics period. */
export const ROLLUP_RETENTION_MS = 30 * 24 * HOUR;
/** Finished runs of periodic jobs are kept a day, for `jobs` table forensics. */
export const PERIODIC_RUN_RETENTION_MS = 24 * HOUR;

export interface Pruned {
  healthChecks: number;
  rollups: number;
  runtimeSamples: number;
  periodicRuns: number;
}

/**
 * Deletes monitoring data past its retention. Raw request records never reach the database
 * (the edge sums them per minute in memory), so the oldest raw data are the health probes.
 */
export async function pruneMonitoringData(
  deps: Pick<Deps, 'db' | 'clock'>,
  periodicKinds: readonly string[] = [],
): Promise<Pruned> {
  const now = deps.clock.now().getTime();
  const before = (ms: number) => new Date(now - ms).toISOString();
  const health = await deps.db
    .deleteFrom('health_checks')
    .where('at', '<', before(HEALTH_RETENTION_MS))
    .executeTakeFirst();
  const rollups = await deps.db
    .deleteFrom('request_rollups')
    .where('minute', '<', before(ROLLUP_RETENTION_MS))
    .executeTakeFirst();
  const samples = await deps.db
    .deleteFrom('runtime_samples')
    .where('minute', '<', before(ROLLUP_RETENTION_MS))
    .executeTakeFirst();
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
    rollups: Number(rollups.numDeletedRows),
    runtimeSamples: Number(samples.numDeletedRows),
    periodicRuns,
  };
}
