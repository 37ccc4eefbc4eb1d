import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import { LATENCY_COLUMNS, parseHistogram } from '../../monitoring/histogram.ts';
import {
  parseStatusCounts,
  writeRollupRows,
  type RollupDelta,
} from '../../services/monitoring/record-requests.ts';
import type { Database } from '../schema.ts';

/** Minute rows read per batch while back-filling. */
const BATCH = 2_000;

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
    for (const col of [
      'requests',
      'success',
      'errors',
      'server_errors',
      'bytes',
      'latency_sum_ms',
      ...LATENCY_COLUMNS,
    ]) {
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

/**
 * Re-records every stored minute through the same write path the edge uses, so hours and days
 * are exactly the sums of their minutes. (Migrations run inside a transaction, hence the
 * transaction-less `writeRollupRows`; should that function gain columns later, this migration
 * must keep writing the columns of its own time.)
 */
async function backfillTraffic(db: Kysely<Database>): Promise<void> {
  for await (const rows of pages<LegacyRollup>(db, 'request_rollups', '*')) {
    const deltas: RollupDelta[] = rows.map((r) => ({
      projectId: r.project_id,
      minute: r.minute,
      requests: Number(r.requests),
      success: Number(r.success),
      errors: Number(r.errors),
      bytes: Number(r.bytes),
      latencySumMs: Number(r.latency_sum_ms),
      latencyHist: parseHistogram(r.latency_hist),
      statusCounts: parseStatusCounts(r.status_counts),
    }));
    await writeRollupRows(db, deltas);
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
