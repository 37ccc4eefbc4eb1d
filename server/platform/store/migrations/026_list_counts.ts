import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

/**
 * Exact list totals without counting rows at read time, and page numbers that cost the same at
 * any depth (docs/performance.md#exact-totals-and-deep-pages).
 *
 * - `deployment_counts` holds, per project, the number of deployments for every combination of
 *   the filters the list offers by equality (`status`, `target`, `branch`), `''` standing for
 *   "any": 8 rows per (status, target, branch) a deployment has, so any filter is one row.
 * - `project_counts` holds, per organization, the number of projects in each status.
 * - `deployments.list_seq` is a deployment's place in its project's list, counted from the
 *   oldest: 1..n without gaps, in (created_at, id) order, so page N of the unfiltered list starts
 *   at the row whose `list_seq` is `total - (N - 1) * limit` (index `deployments_list_seq`).
 *
 * Triggers keep all three in the same transaction as the rows they count, for every writer
 * (the service, the benches' bulk inserts, tests that insert rows directly, later migrations).
 * The migration backfills them from the rows already there, then creates the triggers.
 */
export function listCounts(d: DialectHelpers): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('deployment_counts')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('branch', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('deployment_counts_pkey', ['project_id', 'status', 'target', 'branch'])
        .execute();
      await db.schema
        .createTable('project_counts')
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('project_counts_pkey', ['organization_id', 'status'])
        .execute();
      await db.schema.alterTable('deployments').addColumn('list_seq', 'integer').execute();
      await backfill(db);
      await db.schema
        .createIndex('deployments_list_seq')
        .on('deployments')
        .columns(['project_id', 'list_seq'])
        .execute();
      for (const statement of d.name === 'sqlite' ? SQLITE_TRIGGERS : POSTGRES_TRIGGERS) {
        await sql.raw(statement).execute(db);
      }
    },
  };
}

/** Every combination of (status, target, branch), `''` standing for "any". */
const COMBINATIONS: [string, string, string][] = [
  ["''", "''", "''"],
  ['status', "''", "''"],
  ["''", 'target', "''"],
  ["''", "''", 'branch'],
  ['status', 'target', "''"],
  ['status', "''", 'branch'],
  ["''", 'target', 'branch'],
  ['status', 'target', 'branch'],
];

async function backfill(db: Kysely<unknown>) {
  for (const [s, t, b] of COMBINATIONS) {
    await sql
      .raw(
        `INSERT INTO deployment_counts (project_id, status, target, branch, n)
         SELECT project_id, ${s}, ${t}, ${b}, count(*) FROM deployments
         GROUP BY ${['project_id', s, t, b].filter((c) => c !== "''").join(', ')}`,
      )
      .execute(db);
  }
  await sql`INSERT INTO project_counts (organization_id, status, n)
    SELECT organization_id, status, count(*) FROM projects GROUP BY organization_id, status`.execute(db);
  await sql`UPDATE deployments SET list_seq = ranked.seq
    FROM (SELECT id, row_number() OVER (PARTITION BY project_id ORDER BY created_at, id) AS seq
          FROM deployments) AS ranked
    WHERE deployments.id = ranked.id`.execute(db);
}

/** The 8 rows a deployment `row` (NEW or OLD) counts in, each with `delta`. */
const countRows = (row: string, delta: number) =>
  COMBINATIONS.map(
    ([s, t, b]) =>
      `(${row}.project_id, ${s === "''" ? s : `${row}.${s}`}, ${t === "''" ? t : `${row}.${t}`}, ${b === "''" ? b : `${row}.${b}`}, ${delta})`,
  ).join(',\n      ');

const SQLITE_UPSERT = `ON CONFLICT (project_id, status, target, branch) DO UPDATE SET n = n + excluded.n`;

/**
 * SQLite runs one writer at a time, so each trigger sees every row before it. A row inserted
 * older than some already there (a clock set back, a test's fixed timestamps) moves those up one
 * place; the usual insert, the newest, moves nothing.
 */
const SQLITE_TRIGGERS = [
  `CREATE TRIGGER deployments_counts_insert AFTER INSERT ON deployments BEGIN
    INSERT INTO deployment_counts (project_id, status, target, branch, n) VALUES
      ${countRows('NEW', 1)}
      ${SQLITE_UPSERT};
    UPDATE deployments SET list_seq = list_seq + 1
      WHERE project_id = NEW.project_id AND (created_at, id) > (NEW.created_at, NEW.id);
    UPDATE deployments SET list_seq =
      (SELECT n FROM deployment_counts
        WHERE project_id = NEW.project_id AND status = '' AND target = '' AND branch = '')
      - (SELECT count(*) FROM deployments
        WHERE project_id = NEW.project_id AND (created_at, id) > (NEW.created_at, NEW.id))
      WHERE id = NEW.id;
  END`,
  `CREATE TRIGGER deployments_counts_update AFTER UPDATE OF status, target, branch ON deployments
  WHEN OLD.status IS NOT NEW.status OR OLD.target IS NOT NEW.target OR OLD.branch IS NOT NEW.branch
  BEGIN
    INSERT INTO deployment_counts (project_id, status, target, branch, n) VALUES
      ${countRows('OLD', -1)}
      ${SQLITE_UPSERT};
    INSERT INTO deployment_counts (project_id, status, target, branch, n) VALUES
      ${countRows('NEW', 1)}
      ${SQLITE_UPSERT};
  END`,
  `CREATE TRIGGER deployments_counts_delete AFTER DELETE ON deployments BEGIN
    INSERT INTO deployment_counts (project_id, status, target, branch, n) VALUES
      ${countRows('OLD', -1)}
      ${SQLITE_UPSERT};
    UPDATE deployments SET list_seq = list_seq - 1
      WHERE project_id = OLD.project_id AND (created_at, id) > (OLD.created_at, OLD.id);
  END`,
  `CREATE TRIGGER projects_counts_insert AFTER INSERT ON projects BEGIN
    INSERT INTO project_counts (organization_id, status, n) VALUES (NEW.organization_id, NEW.status, 1)
      ON CONFLICT (organization_id, status) DO UPDATE SET n = n + 1;
  END`,
  `CREATE TRIGGER projects_counts_update AFTER UPDATE OF status, organization_id ON projects
  WHEN OLD.status IS NOT NEW.status OR OLD.organization_id IS NOT NEW.organization_id
  BEGIN
    UPDATE project_counts SET n = n - 1 WHERE organization_id = OLD.organization_id AND status = OLD.status;
    INSERT INTO project_counts (organization_id, status, n) VALUES (NEW.organization_id, NEW.status, 1)
      ON CONFLICT (organization_id, status) DO UPDATE SET n = n + 1;
  END`,
  `CREATE TRIGGER projects_counts_delete AFTER DELETE ON projects BEGIN
    UPDATE project_counts SET n = n - 1 WHERE organization_id = OLD.organization_id AND status = OLD.status;
  END`,
];

/**
 * PostgreSQL runs writers side by side. Counter rows are changed in one statement per trigger,
 * in key order, so two transactions never take them in opposite orders; a change that moves a
 * row from one combination to another nets out the combinations it stays in (a status change
 * leaves the project's total row alone). Inserts and deletes of a project's deployments take
 * turns on a transaction-scoped advisory lock before they move any `list_seq`, so each sees the
 * places the one before it gave, and takes that lock before any counter row (a status change
 * holding a deployment row and waiting for a counter row never waits on an insert that waits
 * for it). Rows of the same statement whose own trigger has not run yet have no `list_seq` and
 * are not counted yet, so they are left out of both.
 */
const POSTGRES_TRIGGERS = [
  `CREATE FUNCTION deployment_counts_apply(old_row deployments, new_row deployments) RETURNS void
  LANGUAGE sql AS $$
    INSERT INTO deployment_counts AS c (project_id, status, target, branch, n)
    SELECT k.project_id, k.status, k.target, k.branch, sum(k.delta)::integer
    FROM (
      SELECT old_row.project_id AS project_id, s.v AS status, t.v AS target, b.v AS branch, -1 AS delta
        FROM (VALUES (old_row.status), ('')) s(v), (VALUES (old_row.target), ('')) t(v),
             (VALUES (old_row.branch), ('')) b(v)
        WHERE old_row.id IS NOT NULL
      UNION ALL
      SELECT new_row.project_id, s.v, t.v, b.v, 1
        FROM (VALUES (new_row.status), ('')) s(v), (VALUES (new_row.target), ('')) t(v),
             (VALUES (new_row.branch), ('')) b(v)
        WHERE new_row.id IS NOT NULL
    ) k
    GROUP BY 1, 2, 3, 4 HAVING sum(k.delta) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (project_id, status, target, branch) DO UPDATE SET n = c.n + excluded.n
  $$`,
  `CREATE FUNCTION deployments_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    total integer;
    newer integer := 0;
    newest record;
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      PERFORM deployment_counts_apply(OLD, NEW);
      RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
      PERFORM pg_advisory_xact_lock(hashtext('deployments.list_seq'), hashtext(NEW.project_id));
      -- The newest placed row, by its place: only a row older than it moves others (and the
      -- range below would also walk the unplaced rows of a many-row insert).
      SELECT d.created_at, d.id INTO newest FROM deployments d
        WHERE d.project_id = NEW.project_id AND d.list_seq = (SELECT c.n FROM deployment_counts c
          WHERE c.project_id = NEW.project_id AND c.status = '' AND c.target = '' AND c.branch = '');
      IF FOUND AND (newest.created_at, newest.id) > (NEW.created_at, NEW.id) THEN
        UPDATE deployments SET list_seq = list_seq + 1
          WHERE project_id = NEW.project_id AND (created_at, id) > (NEW.created_at, NEW.id)
            AND list_seq IS NOT NULL;
        GET DIAGNOSTICS newer = ROW_COUNT;
      END IF;
      PERFORM deployment_counts_apply(NULL, NEW);
      SELECT n INTO total FROM deployment_counts
        WHERE project_id = NEW.project_id AND status = '' AND target = '' AND branch = '';
      UPDATE deployments SET list_seq = total - newer WHERE id = NEW.id;
      RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('deployments.list_seq'), hashtext(OLD.project_id));
    UPDATE deployments SET list_seq = list_seq - 1
      WHERE project_id = OLD.project_id AND (created_at, id) > (OLD.created_at, OLD.id)
        AND list_seq IS NOT NULL;
    PERFORM deployment_counts_apply(OLD, NULL);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER deployments_counts_insert AFTER INSERT OR DELETE ON deployments
    FOR EACH ROW EXECUTE FUNCTION deployments_counts_trigger()`,
  `CREATE TRIGGER deployments_counts_update AFTER UPDATE OF status, target, branch ON deployments
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.target IS DISTINCT FROM NEW.target
      OR OLD.branch IS DISTINCT FROM NEW.branch)
    EXECUTE FUNCTION deployments_counts_trigger()`,
  `CREATE FUNCTION projects_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO project_counts AS c (organization_id, status, n)
    SELECT k.organization_id, k.status, sum(k.delta)::integer
    FROM (
      SELECT OLD.organization_id AS organization_id, OLD.status AS status, -1 AS delta WHERE TG_OP <> 'INSERT'
      UNION ALL
      SELECT NEW.organization_id, NEW.status, 1 WHERE TG_OP <> 'DELETE'
    ) k
    GROUP BY 1, 2 HAVING sum(k.delta) <> 0 ORDER BY 1, 2
    ON CONFLICT (organization_id, status) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER projects_counts AFTER INSERT OR DELETE OR UPDATE OF status, organization_id ON projects
    FOR EACH ROW EXECUTE FUNCTION projects_counts_trigger()`,
];
