import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Which database the suite runs on. The vitest `postgres` project sets SLIPWAY_TEST_DIALECT to
 * `postgres` (only when SLIPWAY_TEST_DATABASE_URL points at a server); everything else is SQLite.
 */
export function testDialect(): 'sqlite' | 'postgres' {
  return process.env.SLIPWAY_TEST_DIALECT === 'postgres' && process.env.SLIPWAY_TEST_DATABASE_URL
    ? 'postgres'
    : 'sqlite';
}

/** The admin URL tests create their databases through, or undefined without PostgreSQL. */
export function adminDatabaseUrl(): string | undefined {
  return process.env.SLIPWAY_TEST_DATABASE_URL || undefined;
}

export interface TestDatabase {
  /** `postgres://.../slipway_t_<random>` */
  url: string;
  name: string;
  /** Ends every connection to it and drops it. */
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  // A server restart while we hold this client must not crash the test process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Every database of one test run shares a prefix, so the global teardown drops what a test left
 * behind without touching another run's databases on the same server.
 */
export function runPrefix(): string {
  const run = (process.env.SLIPWAY_TEST_RUN_ID ?? 'adhoc').replace(/[^a-z0-9]/g, '');
  return `slipway_t_${run}_`;
}

/** Drops every database of this run (the global teardown). */
export async function dropRunDatabases(adminUrl = adminDatabaseUrl()): Promise<number> {
  if (!adminUrl) return 0;
  return admin(adminUrl, async (c) => {
    const res = await c.query<{ datname: string }>('select datname from pg_database where datname like $1', [
      `${runPrefix()}%`,
    ]);
    for (const { datname } of res.rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    return res.rows.length;
  });
}

/** Creates a fresh, empty PostgreSQL database next to the admin URL's one. */
export async function createTestDatabase(adminUrl = adminDatabaseUrl()): Promise<TestDatabase> {
  if (!adminUrl) throw new Error('SLIPWAY_TEST_DATABASE_URL is not set');
  const name = `${runPrefix()}${randomBytes(6).toString('hex')}`;
  // The name is ours (hex), so interpolating it is safe; identifiers cannot be bound parameters.
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: withDatabase(adminUrl, name),
    name,
    async drop() {
      await admin(adminUrl, async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }).catch(() => undefined);
    },
  };
}

/** Ends every connection to `name` except ours: to the service it looks like a database restart. */
export async function terminateBackends(name: string, adminUrl = adminDatabaseUrl()): Promise<number> {
  if (!adminUrl) throw new Error('SLIPWAY_TEST_DATABASE_URL is not set');
  return admin(adminUrl, async (c) => {
    const res = await c.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    );
    return res.rowCount ?? 0;
  });
}

/** The database each data dir was given, so a test that reopens a data dir finds its data again. */
const byDataDir = new Map<string, TestDatabase>();

/**
 * For the test helpers: a fresh PostgreSQL database when the suite runs on PostgreSQL and the
 * caller did not choose a DATABASE_URL itself; otherwise nothing (SQLite in the data dir).
 * `ownsDataDir` is false when the test passed its own data dir and may reopen it: the database
 * then outlives this app, like the SQLite file would, and the global teardown drops it.
 */
export async function databaseForTest(
  env: Record<string, string> | undefined,
  dataDir: string,
  ownsDataDir: boolean,
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (testDialect() !== 'postgres' || env?.DATABASE_URL !== undefined) {
    return { env: {}, drop: async () => undefined };
  }
  let db = byDataDir.get(dataDir);
  if (!db) {
    db = await createTestDatabase();
    byDataDir.set(dataDir, db);
  }
  const { url } = db;
  return {
    env: { DATABASE_URL: url, SLIPWAY_DB_POOL_SIZE: '4' },
    drop: async () => {
      if (!ownsDataDir) return;
      byDataDir.delete(dataDir);
      await db.drop();
    },
  };
}

/** The PostgreSQL URL a data dir was given by the helpers (for child processes a test spawns). */
export function databaseUrlOf(dataDir: string): string | undefined {
  return byDataDir.get(dataDir)?.url;
}
