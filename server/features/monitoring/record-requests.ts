import { sql, type Insertable, type Kysely } from 'kysely';
import {
  bucketIndex,
  emptyHistogram,
  LATENCY_COLUMNS,
  mergeHistograms,
  type Histogram,
} from '../../core/histogram.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import type {
  Database,
  RollupSpan,
  TrafficRollupsTable,
  TrafficStatusCountsTable,
} from '../../platform/store/schema.ts';

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

/** Adds a batch of served requests to the rollups (see `writeRollupDeltas`). */
export async function recordRequests(
  deps: Pick<Deps, 'db' | 'metrics'>,
  batch: readonly ServedRequest[],
): Promise<void> {
  await writeRollupDeltas(deps, summarizeRequests(batch));
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const SPAN_MS: Record<RollupSpan, number> = { minute: 60_000, hour: HOUR_MS, day: DAY_MS };

/** Start (ISO) of the minute, hour or day (UTC) that holds `at`. */
export const spanStart = (at: string | number, span: RollupSpan): string => {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  return new Date(Math.floor(ms / SPAN_MS[span]) * SPAN_MS[span]).toISOString();
};

const SPANS: readonly RollupSpan[] = ['minute', 'hour', 'day'];
/** The counters of a traffic rollup row, summed as they are. */
const COUNTERS = ['requests', 'success', 'errors', 'server_errors', 'bytes', 'latency_sum_ms'] as const;
type TrafficRow = Insertable<TrafficRollupsTable>;
type StatusRow = Insertable<TrafficStatusCountsTable>;

/**
 * Rows per statement: 34 values each, well under SQLite's 32,766 and PostgreSQL's 65,535
 * parameters.
 */
const CHUNK = 200;

/** `col = <table>.col + excluded.col` for each column: adds the new row into the stored one. */
function addExcluded(table: string, cols: readonly string[]) {
  return Object.fromEntries(
    cols.map((c) => [c, sql`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`]),
  );
}

const keyOf = (r: { project_id: string; span: string; bucket_start: string }) =>
  `${r.project_id}\u0000${r.span}\u0000${r.bucket_start}`;

/**
 * The rows that per-minute deltas add to: each minute's own row and the rows of its hour and its
 * day, merged by key and sorted (see `writeRollupDeltas`).
 */
export function rollupRows(deltas: readonly RollupDelta[]): { traffic: TrafficRow[]; statuses: StatusRow[] } {
  const traffic = new Map<string, TrafficRow>();
  const statuses = new Map<string, StatusRow>();
  for (const d of deltas) {
    let serverErrors = 0;
    for (const [code, n] of Object.entries(d.statusCounts))
      if (Number(code) >= 500 && Number(code) <= 599) serverErrors += n;
    for (const span of SPANS) {
      const base = { project_id: d.projectId, span, bucket_start: spanStart(d.minute, span) };
      const key = keyOf(base);
      let row = traffic.get(key);
      if (!row) {
        row = {
          ...base,
          requests: 0,
          success: 0,
          errors: 0,
          server_errors: 0,
          bytes: 0,
          latency_sum_ms: 0,
        } as TrafficRow;
        for (const c of LATENCY_COLUMNS) row[c] = 0;
        traffic.set(key, row);
      }
      row.requests += d.requests;
      row.success += d.success;
      row.errors += d.errors;
      row.server_errors += serverErrors;
      row.bytes += d.bytes;
      row.latency_sum_ms += d.latencySumMs;
      const hist = mergeHistograms(d.latencyHist);
      LATENCY_COLUMNS.forEach((c, i) => (row[c] += hist[i]!));
      for (const [code, n] of Object.entries(d.statusCounts)) {
        const s = { ...base, status: Number(code), count: 0 };
        const sKey = `${key}\u0000${code}`;
        const existing = statuses.get(sKey) ?? s;
        existing.count += n;
        statuses.set(sKey, existing);
      }
    }
  }
  const sorted = <T>(m: Map<string, T>) =>
    [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  return { traffic: sorted(traffic), statuses: sorted(statuses) };
}

/**
 * Adds per-minute deltas to the rollups of their minute, hour and day, all in one transaction,
 * with `INSERT ... ON CONFLICT DO UPDATE SET col = table.col + excluded.col` (the same SQL on
 * SQLite and PostgreSQL; PostgreSQL locks each row it adds to, so concurrent edges never lose an
 * update). Rows are sorted by key so two writers lock them in the same order and cannot deadlock.
 *
 * Hours and days are written here, with their minutes, rather than rolled up later by the
 * monitoring run: every counter is a sum and the latency histogram is bucket counts, so adding a
 * delta to the three rows keeps each hour and day exactly the sum of its minutes, including for
 * counts that arrive late (a recorder retrying after an outage), which a later roll-up pass would
 * have to find again; and a reader never sees a minute without its hour.
 */
export async function writeRollupDeltas(
  deps: Pick<Deps, 'db' | 'metrics'>,
  deltas: readonly RollupDelta[],
): Promise<void> {
  if (deltas.length === 0) return;
  await deps.db.transaction().execute((tx) => writeRollupRows(tx, deltas));
  deps.metrics.rollupsChanged();
}

/** `writeRollupDeltas` without its transaction, for callers already in one (a migration). */
export async function writeRollupRows(db: Kysely<Database>, deltas: readonly RollupDelta[]): Promise<void> {
  const { traffic, statuses } = rollupRows(deltas);
  for (let i = 0; i < traffic.length; i += CHUNK) {
    await db
      .insertInto('traffic_rollups')
      .values(traffic.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc
          .columns(['project_id', 'span', 'bucket_start'])
          .doUpdateSet(addExcluded('traffic_rollups', [...COUNTERS, ...LATENCY_COLUMNS])),
      )
      .execute();
  }
  for (let i = 0; i < statuses.length; i += CHUNK) {
    await db
      .insertInto('traffic_status_counts')
      .values(statuses.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc
          .columns(['project_id', 'span', 'bucket_start', 'status'])
          .doUpdateSet(addExcluded('traffic_status_counts', ['count'])),
      )
      .execute();
  }
}
