import { LRUCache } from 'lru-cache';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { Cipher } from '../../core/secrets.ts';
import { dialectHelpers, type DialectHelpers } from './dialect.ts';
import { allMigrations } from './migrations/index.ts';
import { createLocalNotifier, createPostgresNotifier, type Notifier } from './notify.ts';
import { createPreparedRunner, type RunPrepared, type StatementRunners } from './prepared.ts';
import type { Database } from './schema.ts';
import { watchSqliteChanges } from './sqlite-changes.ts';

export interface Store {
  db: Kysely<Database>;
  dialect: DialectHelpers;
  /** Wake-ups between processes (LISTEN/NOTIFY on PostgreSQL, in-process on SQLite). */
  notifier: Notifier;
  /**
   * Runs a statement declared with `prepared` (server/platform/store/prepared.ts): compiled on its first
   * run on this store and kept, then run with new parameters.
   */
  run: RunPrepared;
  /** Runs pending migrations; safe to call on every start. `cipher` encrypts what data migrations seal. */
  migrate(cipher: Cipher): Promise<string[]>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
  /** The PostgreSQL pool's connections now (ops metrics); null on SQLite, which has no pool. */
  poolStats(): PoolStats | null;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections open. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  max: number;
}

export interface StoreOptions {
  /** `postgres://...` switches to PostgreSQL; otherwise SQLite under dataDir. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** Where a lost notification connection or a failed NOTIFY is reported. */
  onError?: (err: unknown, what: string) => void;
}

export function openStore(opts: StoreOptions): Store {
  if (opts.databaseUrl && /^postgres(ql)?:\/\//.test(opts.databaseUrl)) {
    const pool = openPool(opts.databaseUrl, opts.poolSize ?? 10);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    // Frequent small writes (the rate-limit count) go through two connections that commit without
    // waiting for the disk: every request of one token updates one row, and waiting for each
    // commit's flush while holding that row's lock would serialize them (see server/platform/store/prepared.ts).
    const asyncPool = openPool(opts.databaseUrl, 2, '-c synchronous_commit=off');
    const notifier = createPostgresNotifier({
      connectionString: opts.databaseUrl,
      db,
      ...(opts.onError ? { onError: opts.onError } : {}),
    });
    const named = (on: pg.Pool) => {
      // A connection keeps a statement's plan; a migration by a newer process that changes a table
      // it reads makes PostgreSQL refuse the plan ("cached plan must not change result type"):
      // then every statement is prepared again under a new name.
      let generation = 0;
      const query = async (name: string, text: string, values: unknown[]) =>
        (await on.query<Record<string, unknown>>({ name: `${name}_${generation}`, text, values })).rows;
      return async (name: string, text: string, params: readonly unknown[]) => {
        try {
          return await query(name, text, params as unknown[]);
        } catch (err) {
          if ((err as { code?: unknown }).code !== '0A000') throw err;
          generation++;
          return query(name, text, params as unknown[]);
        }
      };
    };
    const runners: StatementRunners = {
      postgres: { run: named(pool), runAsyncCommit: named(asyncPool) },
    };
    const poolStats = (): PoolStats => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: opts.poolSize ?? 10,
    });
    return makeStore(db, dialectHelpers('postgres'), notifier, runners, {
      closeMore: () => asyncPool.end(),
      poolStats,
    });
  }
  mkdirSync(opts.dataDir, { recursive: true });
  const file = join(opts.dataDir, 'slipway.db');
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const statements = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  // A transaction holds Kysely's connection lock across awaits; a statement run beside it would
  // join it. Only a connection with no transaction open runs statements directly.
  const runOn = (text: string) => {
    const stmt = statements.prepare(text);
    return (params: readonly unknown[]): unknown[] => {
      if (stmt.reader) return stmt.all(params);
      stmt.run(params);
      return [];
    };
  };
  const runMany = sqlite.transaction((text: string, lists: readonly (readonly unknown[])[]) =>
    lists.map(runOn(text)),
  );
  const changes = watchSqliteChanges(sqlite);
  const runners: StatementRunners = {
    direct: {
      run: (text, params) => (sqlite.inTransaction ? undefined : runOn(text)(params)),
      runMany: (text, lists) => (sqlite.inTransaction ? undefined : runMany(text, lists)),
      version: changes.version,
    },
  };
  return makeStore(db, dialectHelpers('sqlite'), createLocalNotifier(), runners, { migrated: changes.reset });
}

/**
 * Kysely prepares every query anew, and preparing costs more than running a point query; the
 * statements are kept by their SQL text (queries are parameterised, so the set stays small).
 */
function withStatementCache(sqlite: SqliteDatabase.Database) {
  // Bounded for the few statements whose text varies (an IN list of any length): the least
  // recently used go first, never the hot ones all at once.
  const cache = new LRUCache<string, SqliteDatabase.Statement>({ max: 1000 });
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = sqlite.prepare(text);
        cache.set(text, stmt);
      }
      return stmt;
    },
  };
}

function openPool(connectionString: string, max: number, options?: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    ...(options ? { options } : {}),
    // While the database is unreachable a request fails fast (503) instead of queueing forever.
    connectionTimeoutMillis: 5000,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // A checked-out client (between the statements of a transaction) has no pool listener; its
  // connection dropping must fail the next query, not crash the process.
  pool.on('connect', (client) => void client.on('error', () => undefined));
  return pool;
}

function makeStore(
  db: Kysely<Database>,
  dialect: DialectHelpers,
  notifier: Notifier,
  runners: StatementRunners,
  more: {
    closeMore?: () => Promise<void>;
    /** After migrations ran (they may rebuild a table whose changes are watched). */
    migrated?: () => void;
    poolStats?: () => PoolStats;
  } = {},
): Store {
  const { closeMore = async () => undefined, migrated = () => undefined } = more;
  return {
    db,
    dialect,
    notifier,
    run: createPreparedRunner(db, runners),
    async migrate(cipher) {
      const provider: MigrationProvider = { getMigrations: async () => allMigrations(dialect, cipher) };
      // A migration numbered below one already applied (027 landed after 028) still runs.
      const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
      const { error, results } = await migrator.migrateToLatest();
      migrated();
      if (error)
        throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    async ping() {
      try {
        await db.selectFrom('users').select('id').limit(1).execute();
        return true;
      } catch {
        return false;
      }
    },
    poolStats: () => more.poolStats?.() ?? null,
    async close() {
      await notifier.close();
      await db.destroy();
      await closeMore();
    },
  };
}
