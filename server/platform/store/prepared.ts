import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Database } from './schema.ts';
import type { WatchedTable } from './sqlite-changes.ts';

/**
 * Runs compiled statements synchronously on an embedded database. Each answers undefined when
 * it cannot (a transaction is open on the connection: the statement must wait for it through
 * Kysely's connection lock instead).
 */
export interface DirectRunner {
  run(sql: string, params: readonly unknown[]): unknown[] | undefined;
  /** Runs one statement with each list of parameters, in one transaction; rows per list. */
  runMany(sql: string, params: readonly (readonly unknown[])[]): unknown[][] | undefined;
  /** Changes whenever a watched table may have changed (server/platform/store/sqlite-changes.ts). */
  version(): number;
}

/**
 * Runs statements on PostgreSQL as named prepared statements: each connection parses and plans a
 * statement once, then only binds and executes it (one round trip, no planning per request).
 */
export interface PostgresRunner {
  run: (name: string, sql: string, params: readonly unknown[]) => Promise<unknown[]>;
  /**
   * The same on a connection that commits without waiting for the disk (`synchronous_commit =
   * off`): other sessions see the write at once, and a database crash can lose only the last
   * fraction of a second of such writes, in order.
   */
  runAsyncCommit: (name: string, sql: string, params: readonly unknown[]) => Promise<unknown[]>;
}

export interface PreparedOptions {
  /**
   * A small write every request makes (the rate-limit count), whose commit costs more than the
   * statement. On the embedded database, calls made in one turn of the event loop commit
   * together in one transaction; on PostgreSQL, the statement commits asynchronously. Each call
   * still gets its own rows, and every process sees the write at once.
   */
  frequentWrite?: boolean;
  /**
   * A read every request makes (a project with the caller's role): on the embedded database its
   * rows are kept, by parameters, until one of these tables changes, by this process or any
   * other (server/platform/store/sqlite-changes.ts); a kept answer is the one the database would give.
   * The rows are frozen: callers copy what they change. PostgreSQL reads every time (there a
   * request's first read shares its round trip with the rate-limit count).
   */
  keepUntilChanged?: readonly WatchedTable[];
}

/** Most answers one `keepUntilChanged` statement keeps (the least recently used go first). */
const MAX_KEPT = 10_000;

/** A statement declared once (see `prepared`); `P` its parameters, `R` a row. */
export interface PreparedStatement<P extends readonly unknown[], R> {
  readonly arity: P['length'];
  readonly build: (db: Kysely<Database>, ...placeholders: string[]) => Compilable<R>;
  readonly options: PreparedOptions;
  /** Carries `P` for the type checker only. */
  readonly params?: P;
}

/**
 * Declares a query to build once with Kysely and run many times with new parameters, skipping
 * the query builder and compiler on every call: for the few queries every request runs (token
 * lookup, rate limit, project access). Declare it at module level and run it with
 * `store.run(statement, ...params)`: each store compiles it on first use and keeps it, so the
 * set a store keeps is the set of declarations. `build` receives placeholder values, one per
 * parameter, and must use each exactly where the real value goes; the SQL text is the dialect's
 * own.
 *
 * On the embedded database the statement also skips Kysely's driver (its connection lock and
 * promise hops cost more than the statement): better-sqlite3 runs it synchronously, which is
 * safe whenever no transaction is open on the connection.
 */
export function prepared<P extends readonly unknown[], R>(
  arity: P['length'],
  build: (db: Kysely<Database>, ...placeholders: string[]) => Compilable<R>,
  options: PreparedOptions = {},
): PreparedStatement<P, R> {
  return { arity, build, options };
}

/** How a store runs prepared statements beside Kysely (server/platform/store/db.ts makes them). */
export interface StatementRunners {
  /** The embedded database's synchronous path. */
  direct?: DirectRunner;
  /** PostgreSQL's named statements, and its connections for frequent writes. */
  postgres?: PostgresRunner;
}

export type RunPrepared = <P extends readonly unknown[], R>(
  statement: PreparedStatement<P, R>,
  ...params: P
) => Promise<R[]>;

type Runner = (params: readonly unknown[]) => Promise<unknown[]>;

/** The store's `run`: compiles each statement on its first call and keeps it for this database. */
export function createPreparedRunner(db: Kysely<Database>, runners: StatementRunners): RunPrepared {
  // Keyed by declaration: module-level constants, so this holds one entry per declaration.
  const compiled = new Map<object, Runner>();
  const turn = runners.direct ? createTurn(runners.direct) : undefined;
  return <P extends readonly unknown[], R>(statement: PreparedStatement<P, R>, ...params: P) => {
    let run = compiled.get(statement);
    if (!run) {
      run = compile(db, statement, runners, `slipway_${compiled.size + 1}`, turn);
      compiled.set(statement, run);
    }
    return run(params) as Promise<R[]>;
  };
}

function compile(
  db: Kysely<Database>,
  statement: PreparedStatement<readonly unknown[], unknown>,
  { direct, postgres }: StatementRunners,
  /** The statement's name on PostgreSQL connections, unique in this store. */
  name: string,
  turn: Turn | undefined,
): Runner {
  const { options } = statement;
  const bind = binder(db, statement);

  const runOne: Runner = async (params) => {
    const { sql, values } = bind(params);
    const rows = direct?.run(sql, values);
    if (rows) return rows;
    const result = await db.executeQuery(CompiledQuery.raw(sql, values));
    return result.rows;
  };
  if (postgres) {
    const run = options.frequentWrite ? postgres.runAsyncCommit : postgres.run;
    return (params) => {
      const { sql, values } = bind(params);
      return run(name, sql, values);
    };
  }
  if (!turn) return runOne;
  if (options.keepUntilChanged) return keptUntilChanged(runOne, turn);
  if (options.frequentWrite) return (params) => turn.write(bind(params), () => runOne(params));
  return runOne;
}

/**
 * The SQL of a prepared statement with its parameters in place, compiled on the first call: what
 * the store runs (and what a test can EXPLAIN).
 */
export function binder(
  db: Kysely<Database>,
  { arity, build }: PreparedStatement<readonly unknown[], unknown>,
): (params: readonly unknown[]) => { sql: string; values: unknown[] } {
  let compiled: { sql: string; positions: number[]; constants: unknown[] } | undefined;
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000slipway-param-${i}\u0000`);
  return (params) => {
    if (!compiled) {
      const q = build(db, ...placeholders).compile();
      compiled = {
        sql: q.sql,
        positions: q.parameters.map((p) => placeholders.indexOf(p as string)),
        constants: [...q.parameters],
      };
    }
    const { sql, positions, constants } = compiled;
    return { sql, values: positions.map((pos, i) => (pos === -1 ? constants[i] : params[pos])) };
  };
}

/**
 * The embedded database's work that every request of one turn of the event loop shares, done
 * once at the end of that turn (after its I/O, so every request that arrived in it has joined):
 * the frequent writes of the turn commit in one transaction, then one read of the version of
 * the watched tables serves every read kept until they change. A version read after a request
 * arrived is as exact for it as one read just for it.
 */
interface Turn {
  write(bound: { sql: string; values: unknown[] }, runAlone: () => Promise<unknown[]>): Promise<unknown[]>;
  version(): Promise<number>;
}

function createTurn(direct: DirectRunner): Turn {
  interface Write {
    values: unknown[];
    runAlone: () => Promise<unknown[]>;
    resolve: (rows: unknown[]) => void;
    reject: (err: unknown) => void;
  }
  let writes = new Map<string, Write[]>();
  let versions: { resolve: (v: number) => void; reject: (err: unknown) => void }[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const groups = writes;
    writes = new Map();
    for (const [sql, calls] of groups) {
      let results: unknown[][] | undefined;
      try {
        results = direct.runMany(
          sql,
          calls.map((c) => c.values),
        );
      } catch {
        // One failing statement rolls the group back: run each alone, so only it fails.
        results = undefined;
      }
      calls.forEach((c, i) => {
        if (results) c.resolve(results[i]!);
        else c.runAlone().then(c.resolve, c.reject);
      });
    }
    const waiting = versions;
    versions = [];
    if (waiting.length === 0) return;
    try {
      const version = direct.version();
      for (const w of waiting) w.resolve(version);
    } catch (err) {
      for (const w of waiting) w.reject(err);
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    // After the I/O of this turn: every request that arrived in it joins.
    setImmediate(flush);
  };
  return {
    write: ({ sql, values }, runAlone) =>
      new Promise((resolve, reject) => {
        let calls = writes.get(sql);
        if (!calls) writes.set(sql, (calls = []));
        calls.push({ values, runAlone, resolve, reject });
        schedule();
      }),
    version: () =>
      new Promise((resolve, reject) => {
        versions.push({ resolve, reject });
        schedule();
      }),
  };
}

/** Answers a read from what it answered before while no watched table has changed since. */
function keptUntilChanged(runOne: Runner, turn: Turn): Runner {
  const kept = new LRUCache<string, { version: number; rows: unknown[] }>({ max: MAX_KEPT });
  return async (params) => {
    const key = JSON.stringify(params);
    // Taken before the read: a change during it leaves the answer kept under an older version.
    const version = await turn.version();
    const hit = kept.get(key);
    if (hit?.version === version) return hit.rows;
    const rows = Object.freeze((await runOne(params)).map((row) => Object.freeze(row))) as unknown[];
    kept.set(key, { version, rows });
    return rows;
  };
}
