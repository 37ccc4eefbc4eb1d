import { sql, type Kysely } from 'kysely';
import type { Database } from '../../server/platform/store/schema.ts';

interface CountRow {
  key: string;
  n: number;
}

const asRows = (rows: { key: string; n: number | string }[]): CountRow[] =>
  rows
    .map((r) => ({ key: r.key, n: Number(r.n) }))
    .filter((r) => r.n !== 0)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

/**
 * The counters of migration 026 and the same figures counted from the rows (COUNT(*) per
 * combination, `row_number()` per project), for tests to compare: `kept` must equal `counted`.
 */
export async function listCountsNow(db: Kysely<Database>) {
  const kept = await db
    .selectFrom('deployment_counts')
    .select([sql<string>`project_id || '/' || status || '/' || target || '/' || branch`.as('key'), 'n'])
    .execute();
  const combos = [
    ["''", "''", "''"],
    ['status', "''", "''"],
    ["''", 'target', "''"],
    ["''", "''", 'branch'],
    ['status', 'target', "''"],
    ['status', "''", 'branch'],
    ["''", 'target', 'branch'],
    ['status', 'target', 'branch'],
  ];
  const counted = await sql<{ key: string; n: number | string }>`${sql.raw(
    combos
      .map(
        ([s, t, b]) =>
          `SELECT project_id || '/' || ${s} || '/' || ${t} || '/' || ${b} AS key, count(*) AS n
           FROM deployments GROUP BY ${['project_id', s, t, b].filter((c) => c !== "''").join(', ')}`,
      )
      .join(' UNION ALL '),
  )}`.execute(db);
  const projectsKept = await db
    .selectFrom('project_counts')
    .select([sql<string>`organization_id || '/' || status`.as('key'), 'n'])
    .execute();
  const projectsCounted = await db
    .selectFrom('projects')
    .select([
      sql<string>`organization_id || '/' || status`.as('key'),
      (eb) => eb.fn.countAll<number>().as('n'),
    ])
    .groupBy(['organization_id', 'status'])
    .execute();
  // Places that differ from the rows' rank, newest last, per project.
  const misplaced = await sql<{ id: string; list_seq: number | null; rank: number | string }>`
    SELECT id, list_seq, rank FROM (
      SELECT id, list_seq, row_number() OVER (PARTITION BY project_id ORDER BY created_at, id) AS rank
      FROM deployments) AS r
    WHERE list_seq IS NULL OR list_seq <> rank`.execute(db);
  return {
    deployments: { kept: asRows(kept), counted: asRows(counted.rows) },
    projects: { kept: asRows(projectsKept), counted: asRows(projectsCounted) },
    misplaced: misplaced.rows,
  };
}
