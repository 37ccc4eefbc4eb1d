import { sql, type Kysely } from 'kysely';
import { every } from '../../../core/every.ts';
import type { DialectName } from '../../../platform/store/dialect.ts';
import type { Database } from '../../../platform/store/schema.ts';

export interface OtherWritersWatch {
  /** Ends the polling; resolves once a poll under way has ended. */
  stop(): Promise<void>;
}

/**
 * On SQLite the routing signal reaches only this process, but another process may write the
 * database too: `slipway project suspend` or `resume` run beside `slipway serve`. SQLite's
 * `PRAGMA data_version` changes when a connection other than this one commits, so polling it
 * once a second (a read of one number) tells when cached routes may be out of date. On
 * PostgreSQL every writer sends the signal itself (LISTEN/NOTIFY) and nothing is polled.
 */
export function watchOtherWriters(
  deps: { db: Kysely<Database>; dialect: { name: DialectName } },
  onChange: () => void,
  opts: { intervalMs?: number; onError?: (err: unknown) => void } = {},
): OtherWritersWatch {
  if (deps.dialect.name !== 'sqlite') return { stop: async () => undefined };
  let last: number | undefined;
  let busy = false;
  const poll = async () => {
    // every() does not overlap its runs, but the first poll runs outside it.
    if (busy) return;
    busy = true;
    try {
      const { rows } = await sql<{ data_version: number }>`pragma data_version`.execute(deps.db);
      const version = rows[0]?.data_version;
      if (last !== undefined && version !== last) onChange();
      last = version;
    } catch (err) {
      opts.onError?.(err);
    } finally {
      busy = false;
    }
  };
  void poll();
  const timer = every(opts.intervalMs ?? 1000, poll, { onError: () => undefined });
  return { stop: () => timer.stop() };
}
