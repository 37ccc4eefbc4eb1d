import { sql, type Kysely } from 'kysely';
import {
  bucketIndex,
  emptyHistogram,
  mergeHistograms,
  parseHistogram,
  type Histogram,
} from '../../monitoring/histogram.ts';
import type { Database } from '../../store/schema.ts';

/** One request the edge answered. */
export interface ServedRequest {
  projectId: string;
  /** When the response finished. */
  at: Date;
  /** HTTP status sent. */
  status: number;
  durationMs: number;
  /** Response bytes sent. */
  bytes: number;
}

/** What one batch adds to one (project, minute) row. */
export interface RollupDelta {
  projectId: string;
  /** Start of the minute, ISO. */
  minute: string;
  requests: number;
  success: number;
  errors: number;
  bytes: number;
  latencySumMs: number;
  latencyHist: Histogram;
  /** Status code to count, for codes >= 400 only. */
  statusCounts: Record<string, number>;
}

/** A request is an error when its status is 400 or more; everything below counts as success. */
export const isErrorStatus = (status: number) => status >= 400;

export const minuteOf = (at: Date): string =>
  new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString();

export function mergeStatusCounts(...counts: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) for (const [code, n] of Object.entries(c)) out[code] = (out[code] ?? 0) + n;
  return out;
}

export function parseStatusCounts(json: string): Record<string, number> {
  try {
    const value: unknown = JSON.parse(json);
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(
        Object.entries(value).filter((e): e is [string, number] => typeof e[1] === 'number'),
      );
    }
  } catch {
    // A corrupt row reads as no errors rather than failing the whole period.
  }
  return {};
}

/** An empty delta for one project and minute. */
export function emptyDelta(projectId: string, minute: string): RollupDelta {
  return {
    projectId,
    minute,
    requests: 0,
    success: 0,
    errors: 0,
    bytes: 0,
    latencySumMs: 0,
    latencyHist: emptyHistogram(),
    statusCounts: {},
  };
}

/** Counts one request into a delta. */
export function addRequest(d: RollupDelta, status: number, durationMs: number, bytes: number): void {
  const duration = Math.max(0, Math.round(durationMs));
  d.requests += 1;
  d.bytes += Math.max(0, Math.round(bytes));
  d.latencySumMs += duration;
  const bucket = bucketIndex(duration);
  d.latencyHist[bucket] = d.latencyHist[bucket]! + 1;
  if (isErrorStatus(status)) {
    d.errors += 1;
    d.statusCounts[String(status)] = (d.statusCounts[String(status)] ?? 0) + 1;
  } else {
    d.success += 1;
  }
}

/** Adds `from` into `into` (same project and minute). */
export function mergeDelta(into: RollupDelta, from: RollupDelta): void {
  into.requests += from.requests;
  into.success += from.success;
  into.errors += from.errors;
  into.bytes += from.bytes;
  into.latencySumMs += from.latencySumMs;
  into.latencyHist = mergeHistograms(into.latencyHist, from.latencyHist);
  into.statusCounts = mergeStatusCounts(into.statusCounts, from.statusCounts);
}

/** Groups requests by project and minute. */
export function summarizeRequests(batch: readonly ServedRequest[]): RollupDelta[] {
  const byKey = new Map<string, RollupDelta>();
  for (const r of batch) {
    const minute = minuteOf(r.at);
    const key = `${r.projectId}\u0000${minute}`;
    let d = byKey.get(key);
    if (!d) {
      d = emptyDelta(r.projectId, minute);
      byKey.set(key, d);
    }
    addRequest(d, r.status, r.durationMs, r.bytes);
  }
  return [...byKey.values()];
}

/** Adds a batch of served requests to the per-minute rollups (see `writeRollupDeltas`). */
export async function recordRequests(db: Kysely<Database>, batch: readonly ServedRequest[]): Promise<void> {
  await writeRollupDeltas(db, summarizeRequests(batch));
}

/**
 * Adds per-minute deltas to the rollups, all in one transaction. Works the
 * same on SQLite and PostgreSQL without dialect-specific SQL: each row is first created empty if
 * missing (ON CONFLICT DO NOTHING), then the counters are incremented in place, which on
 * PostgreSQL also locks the row, so the read-modify-write of the JSON columns that follows cannot
 * lose another writer's update. Rows are touched in a fixed order so two writers cannot deadlock.
 */
export async function writeRollupDeltas(
  db: Kysely<Database>,
  unsorted: readonly RollupDelta[],
): Promise<void> {
  if (unsorted.length === 0) return;
  const deltas = [...unsorted].sort((a, b) =>
    a.projectId === b.projectId ? a.minute.localeCompare(b.minute) : a.projectId.localeCompare(b.projectId),
  );
  await db.transaction().execute(async (tx) => {
    for (const d of deltas) {
      await tx
        .insertInto('request_rollups')
        .values({
          project_id: d.projectId,
          minute: d.minute,
          requests: 0,
          success: 0,
          errors: 0,
          bytes: 0,
          latency_sum_ms: 0,
          latency_hist: JSON.stringify(emptyHistogram()),
          status_counts: '{}',
        })
        .onConflict((oc) => oc.columns(['project_id', 'minute']).doNothing())
        .execute();
      await tx
        .updateTable('request_rollups')
        .set({
          requests: sql`requests + ${d.requests}`,
          success: sql`success + ${d.success}`,
          errors: sql`errors + ${d.errors}`,
          bytes: sql`bytes + ${d.bytes}`,
          latency_sum_ms: sql`latency_sum_ms + ${d.latencySumMs}`,
        })
        .where('project_id', '=', d.projectId)
        .where('minute', '=', d.minute)
        .execute();
      const row = await tx
        .selectFrom('request_rollups')
        .select(['latency_hist', 'status_counts'])
        .where('project_id', '=', d.projectId)
        .where('minute', '=', d.minute)
        .executeTakeFirstOrThrow();
      await tx
        .updateTable('request_rollups')
        .set({
          latency_hist: JSON.stringify(mergeHistograms(parseHistogram(row.latency_hist), d.latencyHist)),
          status_counts: JSON.stringify(
            mergeStatusCounts(parseStatusCounts(row.status_counts), d.statusCounts),
          ),
        })
        .where('project_id', '=', d.projectId)
        .where('minute', '=', d.minute)
        .execute();
    }
  });
}
