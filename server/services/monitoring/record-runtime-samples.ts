import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { minuteOf } from './record-requests.ts';

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
 * Adds samples to the per-minute rows in one transaction, the way recordRequests does: create
 * the row empty if missing, then increment in place. The maxima use CASE rather than
 * max()/GREATEST(), which differ between SQLite and PostgreSQL.
 */
export async function recordRuntimeSamples(
  db: Kysely<Database>,
  batch: readonly RuntimeSample[],
): Promise<void> {
  const deltas = summarizeSamples(batch);
  if (deltas.length === 0) return;
  await db.transaction().execute(async (tx) => {
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
  });
}
