import type SqliteDatabase from 'better-sqlite3';

/** Tables whose changes are counted (server/platform/store/prepared.ts `keepUntilChanged`). */
export type WatchedTable = 'projects' | 'memberships';
const WATCHABLE: readonly WatchedTable[] = ['projects', 'memberships'];

export interface SqliteChanges {
  /**
   * A number that changes whenever a watched table may have changed: a write on this connection
   * (temporary triggers call into this process) or a commit by any other connection
   * (`PRAGMA data_version`, read on every call). A statement's rows kept under one version are
   * the rows the database holds for as long as the version stays the same.
   */
  version: () => number;
  /** After a migration (it may rebuild a watched table, and its triggers with it). */
  reset: () => void;
}

/**
 * Counts changes to the watched tables on the embedded database, so reads that run on nearly
 * every request (a project with the caller's role) can be kept until what they read changes.
 *
 * The triggers are TEMP: they exist on this connection only, and call a function registered on
 * it alone, so another process writing the same file is neither slowed nor broken by them; its
 * commits move `data_version` instead. A trigger fires inside the write, before its commit: a
 * row read after that has the version that follows, so nothing read before a change outlives it.
 * A transaction rolled back only costs one read more.
 */
export function watchSqliteChanges(sqlite: SqliteDatabase.Database): SqliteChanges {
  let version = 0;
  let installed = false;
  let otherWriters: unknown;
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  sqlite.function('slipway_changed', { deterministic: false }, () => {
    version++;
    return null;
  });
  const install = () => {
    for (const table of WATCHABLE) {
      for (const event of ['insert', 'update', 'delete']) {
        sqlite.exec(
          `create temp trigger if not exists slipway_changed_${table}_${event} after ${event} on main.${table} ` +
            `begin select slipway_changed(); end`,
        );
      }
    }
    installed = true;
  };
  return {
    version: () => {
      const other = dataVersion.get();
      if (other !== otherWriters) {
        // Another process committed: perhaps a migration that rebuilt a table (dropping the
        // triggers on it), so they are made again where missing.
        otherWriters = other;
        version++;
        installed = false;
      }
      if (!installed) {
        // Made inside another statement's open transaction, the triggers would go if it rolled
        // back: until they can be made, every call answers a new version (nothing kept matches).
        if (sqlite.inTransaction) return ++version;
        install();
        // Changes made while there were no triggers went unseen.
        version++;
      }
      return version;
    },
    reset: () => {
      version++;
      installed = false;
    },
  };
}
