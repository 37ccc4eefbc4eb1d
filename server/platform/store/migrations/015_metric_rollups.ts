import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * This migration's own copy of what it writes, frozen as of its time: the live write path
 * (features/monitoring/record-requests.ts) may gain columns or buckets later, and upgrading an
 * old database must still run this migration exactly as it was.
 */
const LATENCY_COLUMNS = Array.from({ length: 25 }, (_, i) => `lat_${i}`);
const COUNTERS = ['requests', 'success', 'errors', 'server_errors', 'bytes', 'latency_sum_ms'];
const SPAN_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Minute rows read per batch while back-filling. */
const BATCH = 2_000;
/** Rows per insert: 34 values each, well under both databases' parameter limits. */
const CHUNK = 200;

interface LegacyRollup {
  project_id: string;
  minute: string;
  requests: number | string;
  success: number | string;
  errors: number | string;
  bytes: number | string;
  latency_sum_ms: number | string;
  latency_hist: string;
  status_counts: string;
}

/**
 * Metrics that stay flat as data grows (docs/performance.md#data-growth): traffic is kept per
 * minute, hour and day in `traffic_rollups`, with a column per latency bucket and a row per
 * error status instead of JSON, so a 30-day read sums a few dozen rows in the database; runtime
 * samples get hour and day rows in `runtime_rollups`. Existing per-minute traffic and samples
 * are back-filled into the new tables, then the JSON table `request_rollups` is dropped.
 */
export const metricRollups: Migration = {
  async up(db: Kysely<unknown>) {
    let traffic = db.schema
      .createTable('traffic_rollups')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('span', 'text', (c) => c.notNull())
      .addColumn('bucket_start', 'text', (c) => c.notNull());
    for (const col of [...COUNTERS, ...LATENCY_COLUMNS]) {
      traffic = traffic.addColumn(col, 'bigint', (c) => c.notNull().defaultTo(0));
    }
    await traffic
      .addPrimaryKeyConstraint('traffic_rollups_pk', ['project_id', 'span', 'bucket_start'])
      .execute();
    // Pruning deletes by span and age across projects.
    await db.schema
      .createIndex('traffic_rollups_age')
      .on('traffic_rollups')
      .columns(['span', 'bucket_start'])
      .execute();

    await db.schema
      .createTable('traffic_status_counts')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('span', 'text', (c) => c.notNull())
      .addColumn('bucket_start', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('traffic_status_counts_pk', ['project_id', 'span', 'bucket_start', 'status'])
      .execute();
    await db.schema
      .createIndex('traffic_status_counts_age')
      .on('traffic_status_counts')
      .columns(['span', 'bucket_start'])
      .execute();

    await db.schema
      .createTable('runtime_rollups')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('span', 'text', (c) => c.notNull())
      .addColumn('bucket_start', 'text', (c) => c.notNull())
      .addColumn('samples', 'bigint', (c) => c.notNull())
      .addColumn('cpu_sum', 'bigint', (c) => c.notNull())
      .addColumn('cpu_max', 'bigint', (c) => c.notNull())
      .addColumn('ram_sum', 'bigint', (c) => c.notNull())
      .addColumn('ram_max', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('runtime_rollups_pk', ['project_id', 'span', 'bucket_start'])
      .execute();
    await db.schema
      .createIndex('runtime_rollups_age')
      .on('runtime_rollups')
      .columns(['span', 'bucket_start'])
      .execute();

    const typed = db as unknown as Kysely<Database>;
    await backfillTraffic(typed);
    await backfillRuntime(typed);
    await db.schema.dropTable('request_rollups').execute();
  },
};

/** Keyset pages over a (project_id, minute) primary key, so each page is an index range. */
async function* pages<T extends { project_id: string; minute: string }>(
  db: Kysely<Database>,
  table: string,
  columns: string,
): AsyncGenerator<T[]> {
  let after: { project_id: string; minute: string } | null = null;
  for (;;) {
    const where: RawBuilder<unknown> = after
      ? sql`where project_id > ${after.project_id} or (project_id = ${after.project_id} and minute > ${after.minute})`
      : sql``;
    const { rows }: { rows: T[] } = await sql<T>`select ${sql.raw(columns)} from ${sql.table(table)} ${where}
      order by project_id, minute limit ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!;
  }
}

const readJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null; // a corrupt row counts as empty, as the live read did
  }
};

/** A stored histogram as this migration's buckets: a longer one folds into the last bucket. */
function histogramOf(text: string): number[] {
  const out = new Array<number>(LATENCY_COLUMNS.length).fill(0);
  const value = readJson(text);
  if (!Array.isArray(value) || !value.every((n) => typeof n === 'number' && Number.isFinite(n))) return out;
  (value as number[]).forEach((n, i) => (out[Math.min(i, out.length - 1)]! += n));
  return out;
}

/** Stored status counts (codes >= 400); anything but numbers is left out. */
function statusCountsOf(text: string): [number, number][] {
  const value = readJson(text);
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([code, n]) => (typeof n === 'number' ? [[Number(code), n]] : []));
}

type Row = Record<string, string | number>;

/** Adds each row into the stored one with the same key (`col = table.col + excluded.col`). */
async function addRows(db: Kysely<Database>, table: string, key: string[], cols: string[], rows: Row[]) {
  const set = Object.fromEntries(
    cols.map((c) => [c, sql`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`]),
  );
  for (let i = 0; i < rows.length; i += CHUNK) {
    await (db as unknown as Kysely<Record<string, Row>>)
      .insertInto(table)
      .values(rows.slice(i, i + CHUNK))
      // Tables named at run time: Kysely cannot type the SET of a table it is not told about.
      .onConflict((oc) => oc.columns(key).doUpdateSet(set as never))
      .execute();
  }
}

/**
 * Adds every stored minute to the rows of its minute, hour and day, so hours and days are exactly
 * the sums of their minutes (as the live write path keeps them).
 */
async function backfillTraffic(db: Kysely<Database>): Promise<void> {
  for await (const rows of pages<LegacyRollup>(db, 'request_rollups', '*')) {
    const traffic = new Map<string, Row>();
    const statuses = new Map<string, Row>();
    for (const r of rows) {
      const hist = histogramOf(r.latency_hist);
      const counts = statusCountsOf(r.status_counts);
      const serverErrors = counts.reduce((sum, [code, n]) => (code >= 500 && code <= 599 ? sum + n : sum), 0);
      for (const [span, ms] of Object.entries(SPAN_MS)) {
        const bucket = new Date(Math.floor(Date.parse(r.minute) / ms) * ms).toISOString();
        const base = { project_id: r.project_id, span, bucket_start: bucket };
        const key = `${r.project_id}\u0000${span}\u0000${bucket}`;
        const row = traffic.get(key) ?? {
          ...base,
          ...Object.fromEntries([...COUNTERS, ...LATENCY_COLUMNS].map((c) => [c, 0])),
        };
        traffic.set(key, row);
        const add = (col: string, n: number) => (row[col] = Number(row[col]) + n);
        add('requests', Number(r.requests));
        add('success', Number(r.success));
        add('errors', Number(r.errors));
        add('server_errors', serverErrors);
        add('bytes', Number(r.bytes));
        add('latency_sum_ms', Number(r.latency_sum_ms));
        LATENCY_COLUMNS.forEach((c, i) => add(c, hist[i]!));
        for (const [status, n] of counts) {
          const sKey = `${key}\u0000${status}`;
          const s = statuses.get(sKey) ?? { ...base, status, count: 0 };
          s.count = Number(s.count) + n;
          statuses.set(sKey, s);
        }
      }
    }
    // Sorted by key, as the live writers lock rows, though nothing else writes during a migration.
    const sorted = (m: Map<string, Row>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
    await addRows(
      db,
      'traffic_rollups',
      ['project_id', 'span', 'bucket_start'],
      [...COUNTERS, ...LATENCY_COLUMNS],
      sorted(traffic),
    );
    await addRows(
      db,
      'traffic_status_counts',
      ['project_id', 'span', 'bucket_start', 'status'],
      ['count'],
      sorted(statuses),
    );
  }
}

/** Hour and day rows of the existing per-minute runtime samples, summed over deployments, in SQL. */
async function backfillRuntime(db: Kysely<Database>): Promise<void> {
  // ISO timestamps: the first 13 characters name the hour, the first 10 the day.
  for (const [span, len, rest] of [
    ['hour', 13, ':00:00.000Z'],
    ['day', 10, 'T00:00:00.000Z'],
  ] as const) {
    await sql`insert into runtime_rollups (project_id, span, bucket_start, samples, cpu_sum, cpu_max, ram_sum, ram_max)
      select project_id, ${sql.lit(span)}, substr(minute, 1, ${sql.lit(len)}) || ${sql.lit(rest)},
        sum(samples), sum(cpu_sum), max(cpu_max), sum(ram_sum), max(ram_max)
      from runtime_samples group by project_id, substr(minute, 1, ${sql.lit(len)})`.execute(db);
  }
}
