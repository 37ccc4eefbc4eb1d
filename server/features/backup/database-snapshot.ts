import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

/** A database's consistent copy in a backup folder, and how it comes back. */
export interface DatabaseSnapshot {
  dialect: 'sqlite' | 'postgres';
  file: string;
  migration: string | null;
}

export const SQLITE_FILE = 'slipway.db';

const PG_DUMP_MISSING =
  'pg_dump was not found: install the PostgreSQL client of your server’s major version (Debian: apt-get install postgresql-client), or back the database up the way docs/operating.md#backups describes';

/** Runs a PostgreSQL client program, failing with what it printed. */
function runClient(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new Error(PG_DUMP_MISSING.replace('pg_dump', program)) : err),
    );
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
}

/** SQLite's online backup (a consistent copy while the service writes), or pg_dump's custom format. */
export async function snapshotDatabase(
  source: { databaseUrl: string | undefined; dataDir: string },
  dir: string,
): Promise<DatabaseSnapshot> {
  if (source.databaseUrl) {
    const file = 'database.pgdump';
    await runClient('pg_dump', [
      '--format=custom',
      '--no-owner',
      `--file=${join(dir, file)}`,
      source.databaseUrl,
    ]);
    const client = new pg.Client({ connectionString: source.databaseUrl });
    await client.connect();
    try {
      return {
        dialect: 'postgres',
        file,
        migration: await newestMigration((q) => client.query<Record<string, unknown>>(q).then((r) => r.rows)),
      };
    } finally {
      await client.end();
    }
  }
  const live = join(source.dataDir, SQLITE_FILE);
  if (!existsSync(live))
    throw new Error(`There is no database at ${live}: is SLIPWAY_DATA_DIR the service's?`);
  const file = 'database.sqlite';
  const db = new SqliteDatabase(live, { readonly: true, fileMustExist: true });
  try {
    // The pages as of one moment, written whole (no WAL beside it): the copy opens on its own.
    await db.backup(join(dir, file));
    return { dialect: 'sqlite', file, migration: await newestMigration(async (q) => db.prepare(q).all()) };
  } finally {
    db.close();
  }
}

async function newestMigration(query: (sql: string) => Promise<unknown[]>): Promise<string | null> {
  const rows = (await query('select name from kysely_migration order by name desc limit 1')) as {
    name: string;
  }[];
  return rows[0]?.name ?? null;
}

/** Puts a snapshot back: the SQLite file into the data dir, or pg_restore into an empty database. */
export async function restoreDatabase(
  snapshot: DatabaseSnapshot,
  backupDir: string,
  target: { databaseUrl: string | undefined; dataDir: string },
  copyFile: (from: string, to: string) => Promise<void>,
): Promise<void> {
  if (snapshot.dialect === 'postgres') {
    if (!target.databaseUrl) {
      throw new Error(
        'This backup is of a PostgreSQL database: set DATABASE_URL to an empty database to restore it into',
      );
    }
    await requireEmptyPostgres(target.databaseUrl);
    await runClient('pg_restore', [
      '--no-owner',
      '--exit-on-error',
      `--dbname=${target.databaseUrl}`,
      join(backupDir, snapshot.file),
    ]);
    return;
  }
  if (target.databaseUrl) {
    throw new Error(
      'This backup is of an embedded SQLite database: unset DATABASE_URL to restore it into SLIPWAY_DATA_DIR',
    );
  }
  const file = join(target.dataDir, SQLITE_FILE);
  if (existsSync(file)) throw new Error(`${file} exists: restore into an empty SLIPWAY_DATA_DIR`);
  await copyFile(join(backupDir, snapshot.file), file);
}

async function requireEmptyPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      "select count(*) as n from information_schema.tables where table_schema = 'public'",
    );
    if (Number(rows[0]!.n) > 0) {
      throw new Error(
        `The database of DATABASE_URL has tables already: restore into an empty database (createdb, then point DATABASE_URL at it)`,
      );
    }
  } finally {
    await client.end();
  }
}
