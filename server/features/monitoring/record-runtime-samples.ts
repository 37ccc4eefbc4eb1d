import { sql, type Insertable } from 'kysely';
import type { RuntimeRollupsTable } from '../../platform/store/schema.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { minuteOf, spanStart } from './record-requests.ts';

/** One measurement of one deployment's server process group. */
export interface RuntimeSample {
  projectId: string;
  deploymentId: string;
  at: Date;
  /** Percent of one CPU core over the sampling interval (can exceed 100 on several cores). */
  cpuPercent: number;
  /** Resident memory, bytes. */
  ramBytes: number;
}

interface SampleDelta {
  projectId: string;
  deploymentId: string;
  minute: string;
  samples: number;
  cpuSum: number;
  cpuMax: number;
  ramSum: number;
  ramMax: number;
}

/** CPU is stored in hundredths of a percent so that every column is an integer. */
export const toCentiPercent = (percent: number) => Math.max(0, Math.round(percent * 100));

/** Groups samples by (project, minute, deployment), in a fixed order so writers never deadlock. */
export function summarizeSamples(batch: readonly RuntimeSample[]): SampleDelta[] {
  const byKey = new Map<string, SampleDelta>();
  for (const s of batch) {
    const minute = minuteOf(s.at);
    const key = `${s.projectId}\u0000${minute}\u0000${s.deploymentId}`;
    const d = byKey.get(key) ?? {
      projectId: s.projectId,
      deploymentId: s.deploymentId,
      minute,
      samples: 0,
      cpuSum: 0,
      cpuMax: 0,
      ramSum: 0,
      ramMax: 0,
    };
    const cpu = toCentiPercent(s.cpuPercent);
    const ram = Math.max(0, Math.round(s.ramBytes));
    d.samples += 1;
    d.cpuSum += cpu;
    d.cpuMax = Math.max(d.cpuMax, cpu);
    d.ramSum += ram;
    d.ramMax = Math.max(d.ramMax, ram);
    byKey.set(key, d);
  }
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, d]) => d);
}

/**
 * Adds samples to the per-minute rows in one transaction: create the row empty if missing, then
 * increment in place; then to the project's hour and day rows. The maxima use CASE rather than
 * max()/GREATEST(), which differ between SQLite and PostgreSQL.
 */
export async function recordRuntimeSamples(
  deps: Pick<Deps, 'db' | 'metrics'>,
  batch: readonly RuntimeSample[],
): Promise<void> {
  const deltas = summarizeSamples(batch);
  if (deltas.length === 0) return;
  await deps.db.transaction().execute(async (tx) => {
    for (const d of deltas) {
      await tx
        .insertInto('runtime_samples')
        .values({
          project_id: d.projectId,
          minute: d.minute,
          deployment_id: d.deploymentId,
          samples: 0,
          cpu_sum: 0,
          cpu_max: 0,
          ram_sum: 0,
          ram_max: 0,
        })
        .onConflict((oc) => oc.columns(['project_id', 'minute', 'deployment_id']).doNothing())
        .execute();
      await tx
        .updateTable('runtime_samples')
        .set({
          samples: sql`samples + ${d.samples}`,
          cpu_sum: sql`cpu_sum + ${d.cpuSum}`,
          cpu_max: sql`case when cpu_max < ${d.cpuMax} then ${d.cpuMax} else cpu_max end`,
          ram_sum: sql`ram_sum + ${d.ramSum}`,
          ram_max: sql`case when ram_max < ${d.ramMax} then ${d.ramMax} else ram_max end`,
        })
        .where('project_id', '=', d.projectId)
        .where('minute', '=', d.minute)
        .where('deployment_id', '=', d.deploymentId)
        .execute();
    }
    for (const row of hourAndDayRows(deltas)) {
      const max = (c: 'cpu_max' | 'ram_max') =>
        sql<number>`case when ${sql.ref(`runtime_rollups.${c}`)} < ${sql.ref(`excluded.${c}`)} then ${sql.ref(`excluded.${c}`)} else ${sql.ref(`runtime_rollups.${c}`)} end`;
      const add = (c: 'samples' | 'cpu_sum' | 'ram_sum') =>
        sql<number>`${sql.ref(`runtime_rollups.${c}`)} + ${sql.ref(`excluded.${c}`)}`;
      await tx
        .insertInto('runtime_rollups')
        .values(row)
        .onConflict((oc) =>
          oc.columns(['project_id', 'span', 'bucket_start']).doUpdateSet({
            samples: add('samples'),
            cpu_sum: add('cpu_sum'),
            cpu_max: max('cpu_max'),
            ram_sum: add('ram_sum'),
            ram_max: max('ram_max'),
          }),
        )
        .execute();
    }
  });
  deps.metrics.rollupsChanged();
}

/**
 * The hour and day rows the minute deltas add to, over all deployments of a project, sorted by
 * key. Written with the minutes in one transaction (as traffic is, see `writeRollupDeltas`):
 * sums and maxima of the minutes, so exact.
 */
function hourAndDayRows(deltas: readonly SampleDelta[]): Insertable<RuntimeRollupsTable>[] {
  const rows = new Map<string, Insertable<RuntimeRollupsTable>>();
  for (const d of deltas) {
    for (const span of ['hour', 'day'] as const) {
      const bucketStart = spanStart(d.minute, span);
      const key = `${d.projectId}\u0000${span}\u0000${bucketStart}`;
      const row = rows.get(key) ?? {
        project_id: d.projectId,
        span,
        bucket_start: bucketStart,
        samples: 0,
        cpu_sum: 0,
        cpu_max: 0,
        ram_sum: 0,
        ram_max: 0,
      };
      row.samples += d.samples;
      row.cpu_sum += d.cpuSum;
      row.cpu_max = Math.max(row.cpu_max, d.cpuMax);
      row.ram_sum += d.ramSum;
      row.ram_max = Math.max(row.ram_max, d.ramMax);
      rows.set(key, row);
    }
  }
  return [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}
