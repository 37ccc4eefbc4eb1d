import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Runs compiled statements synchronously on an embedded database. Each answers undefined when
 * it cannot (a transaction is open on the connection: the statement must wait for it through
 * Kysely's connection lock instead).
 */
export interface DirectRunner {
  run(sql: string, params: readonly unknown[]): unknown[] | undefined;
  /** Runs one statement with each list of parameters, in one transaction; rows per list. */
  runMany(sql: string, params: readonly (readonly unknown[])[]): unknown[][] | undefined;
}

/**
 * Runs a statement on a PostgreSQL connection that commits without waiting for the disk
 * (`synchronous_commit = off`): other sessions see the write at once, and a database crash can
 * lose only the last fraction of a second of such writes, in order.
 */
export type AsyncCommitRunner = (sql: string, params: readonly unknown[]) => Promise<unknown[]>;

const directRunners = new WeakMap<Kysely<Database>, DirectRunner>();
const asyncCommitRunners = new WeakMap<Kysely<Database>, AsyncCommitRunner>();

/** The store registers one for an embedded database (server/store/db.ts). */
export function registerDirectRunner(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

/** The store registers one for PostgreSQL (server/store/db.ts). */
export function registerAsyncCommitRunner(db: Kysely<Database>, runner: AsyncCommitRunner): void {
  asyncCommitRunners.set(db, runner);
}

export interface PreparedOptions {
  /**
   * A small write every request makes (the rate-limit count), whose commit costs more than the
   * statement. On the embedded database, calls made in one turn of the event loop commit
   * together in one transaction; on PostgreSQL, the statement commits asynchronously. Each call
   * still gets its own rows, and every process sees the write at once.
   */
  frequentWrite?: boolean;
}

/**
 * A query built once with Kysely and run many times with new parameters, skipping the query
 * builder and compiler on every call: for the few queries every request runs (token lookup,
 * rate limit, project access). `build` receives placeholder values, one per parameter, and must
 * use each exactly where the real value goes; the SQL text is the dialect's own.
 *
 * On the embedded database the statement also skips Kysely's driver (its connection lock and
 * promise hops cost more than the statement): better-sqlite3 runs it synchronously, which is
 * safe whenever no transaction is open on the connection.
 */
export function prepared<P extends readonly unknown[], R>(
  db: Kysely<Database>,
  arity: P['length'],
  build: (db: Kysely<Database>, ...placeholders: string[]) => Compilable<R>,
  opts: PreparedOptions = {},
): (...params: P) => Promise<R[]> {
  let compiled: { sql: string; positions: number[]; constants: unknown[] } | undefined;
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000slipway-param-${i}\u0000`);
  const direct = directRunners.get(db);

  const compile = (params: P) => {
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

  const runOne = async (params: P): Promise<R[]> => {
    const { sql, values } = compile(params);
    const rows = direct?.run(sql, values);
    if (rows) return rows as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(sql, values));
    return result.rows;
  };
  if (!opts.frequentWrite) return (...params) => runOne(params);
  const asyncCommit = asyncCommitRunners.get(db);
  if (asyncCommit) {
    return async (...params) => {
      const { sql, values } = compile(params);
      return (await asyncCommit(sql, values)) as R[];
    };
  }
  if (!direct) return (...params) => runOne(params);

  let pending: { params: P; resolve: (rows: R[]) => void; reject: (err: unknown) => void }[] = [];
  const flush = () => {
    const calls = pending;
    pending = [];
    let results: unknown[][] | undefined;
    try {
      const { sql } = compile(calls[0]!.params);
      results = direct.runMany(
        sql,
        calls.map((c) => compile(c.params).values),
      );
    } catch {
      // One failing statement rolls the group back: run each alone, so only it fails.
      results = undefined;
    }
    calls.forEach((c, i) => {
      if (results) c.resolve(results[i] as R[]);
      else runOne(c.params).then(c.resolve, c.reject);
    });
  };
  return (...params) =>
    new Promise<R[]>((resolve, reject) => {
      pending.push({ params, resolve, reject });
      // After the I/O of this turn: every request that arrived in it joins the group.
      if (pending.length === 1) setImmediate(flush);
    });
}
