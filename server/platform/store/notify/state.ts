import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../schema.ts';

export interface PostgresNotifierOptions {
  /** Where the dedicated listening connection goes. */
  connectionString: string;
  /** Sends NOTIFY through the pool. */
  db: Kysely<Database>;
  onError?: (err: unknown, what: string) => void;
  /** First reconnect delay; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
}

/**
 * What one PostgreSQL notifier keeps (createPostgresNotifier makes it once), passed to the
 * functions that connect, publish and subscribe rather than closed over.
 */
export interface PgNotifierState {
  opts: PostgresNotifierOptions;
  /** This process's listeners, by channel. */
  local: EventEmitter;
  onError: (err: unknown, what: string) => void;
  retryMs: number;
  maxRetryMs: number;
  channels: Set<string>;
  /** The channels whose LISTEN is in effect on the current connection: what echoes come back. */
  listening: Set<string>;
  /**
   * Echoes still to come of what this process published with `localNow` (its listeners heard it
   * already), counted by channel and payload. Another process's identical notification may be
   * skipped instead of the echo: the echo is then delivered in its place, later, so nothing is
   * heard earlier than it was sent.
   */
  echoes: Map<string, number>;
  client: pg.Client | null;
  connecting: Promise<void> | null;
  closed: boolean;
  /** The next reconnect's delay. */
  delay: number;
  timer: NodeJS.Timeout | null;
  everConnected: boolean;
  /** NOTIFYs on their way: a command that exits right after publishing must not lose them. */
  sending: Set<Promise<unknown>>;
  /** LISTENs on their way on the open connection: `ready()` waits for them. */
  listens: Set<Promise<void>>;
}

export function createPgNotifierState(opts: PostgresNotifierOptions): PgNotifierState {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const retryMs = opts.retryMs ?? 100;
  return {
    opts,
    local,
    onError: opts.onError ?? (() => undefined),
    retryMs,
    maxRetryMs: opts.maxRetryMs ?? 5000,
    channels: new Set(),
    listening: new Set(),
    echoes: new Map(),
    client: null,
    connecting: null,
    closed: false,
    delay: retryMs,
    timer: null,
    everConnected: false,
    sending: new Set(),
    listens: new Set(),
  };
}

export const echoKey = (channel: string, payload: string) => `${channel}\u0000${payload}`;

/** Counts one echo of `key` as come; false when none was awaited. */
export function takeEcho(st: PgNotifierState, key: string): boolean {
  const n = st.echoes.get(key);
  if (n === undefined) return false;
  if (n === 1) st.echoes.delete(key);
  else st.echoes.set(key, n - 1);
  return true;
}

/** Channel names are ours, but LISTEN takes an identifier, not a parameter. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
