import { EventEmitter } from 'node:events';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

/** Job wake-ups: the payload is the job kind. */
export const JOBS_CHANNEL = 'slipway_jobs';
/** "What a project's hosts serve may have changed": the payload is the project id; every edge drops its cached routes. */
export const ROUTING_CHANNEL = 'slipway_routing';

/**
 * Wake-ups between processes. On PostgreSQL they travel by LISTEN/NOTIFY, so every process on the
 * database hears them; on SQLite (one process) an in-process emitter does. They are hints: a lost
 * one costs a poll interval, never correctness, because every consumer also polls.
 */
export interface Notifier {
  /** True when other processes hear what this one publishes (PostgreSQL). */
  crossProcess: boolean;
  /** Sends after the caller's transaction committed; never throws. close() waits for what is under way. */
  publish(channel: string, payload: string): void;
  /**
   * `payload` is null when notifications may have been missed (the listening connection was
   * re-established): the listener should re-check whatever it caches.
   */
  subscribe(channel: string, listener: (payload: string | null) => void): () => void;
  /** Resolves once subscriptions are live (the listening connection is up, on PostgreSQL). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createLocalNotifier(): Notifier {
  const bus = new EventEmitter();
  bus.setMaxListeners(0);
  return {
    crossProcess: false,
    publish: (channel, payload) => void bus.emit(channel, payload),
    subscribe(channel, listener) {
      bus.on(channel, listener);
      return () => void bus.off(channel, listener);
    },
    ready: async () => undefined,
    close: async () => void bus.removeAllListeners(),
  };
}

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
 * LISTEN on one dedicated connection per process (a pooled one would be handed to other queries),
 * opened on the first subscription and re-opened with backoff whenever it drops.
 */
export function createPostgresNotifier(opts: PostgresNotifierOptions): Notifier {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const onError = opts.onError ?? (() => undefined);
  const retryMs = opts.retryMs ?? 100;
  const maxRetryMs = opts.maxRetryMs ?? 5000;
  const channels = new Set<string>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let delay = retryMs;
  let timer: NodeJS.Timeout | null = null;
  let everConnected = false;
  /** NOTIFYs on their way: a command that exits right after publishing must not lose them. */
  const sending = new Set<Promise<unknown>>();

  const scheduleReconnect = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, maxRetryMs);
  };

  const connect = (): Promise<void> => {
    if (closed) return Promise.resolve();
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: opts.connectionString });
      let dropped = false;
      const drop = (err?: unknown) => {
        if (dropped) return;
        dropped = true;
        if (client === c) client = null;
        if (err) onError(err, 'notification connection lost');
        void c.end().catch(() => undefined);
        scheduleReconnect();
      };
      c.on('error', drop);
      c.on('end', () => drop());
      c.on('notification', (msg) => {
        if (channels.has(msg.channel)) local.emit(msg.channel, msg.payload ?? '');
      });
      try {
        await c.connect();
        for (const ch of channels) await c.query(`LISTEN ${quoteIdent(ch)}`);
        if (closed) {
          await c.end().catch(() => undefined);
          return;
        }
        client = c;
        delay = retryMs;
        // Anything sent while we were away is lost: tell the listeners to re-check.
        if (everConnected) for (const ch of channels) local.emit(ch, null);
        everConnected = true;
      } catch (err) {
        drop(err);
      }
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  return {
    crossProcess: true,
    publish(channel, payload) {
      if (closed) return;
      const sent = sql`select pg_notify(${channel}, ${payload})`
        .execute(opts.db)
        .catch((err: unknown) => onError(err, 'notify failed'))
        .finally(() => sending.delete(sent));
      sending.add(sent);
    },
    subscribe(channel, listener) {
      local.on(channel, listener);
      if (!channels.has(channel)) {
        channels.add(channel);
        if (client) {
          client
            .query(`LISTEN ${quoteIdent(channel)}`)
            .catch((err: unknown) => onError(err, 'listen failed'));
        } else if (!connecting && !timer) {
          void connect();
        }
      }
      return () => void local.off(channel, listener);
    },
    async ready() {
      while (!closed && channels.size > 0 && !client) {
        if (connecting) await connecting;
        else await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      closed = true;
      await Promise.all(sending);
      if (timer) clearTimeout(timer);
      await connecting?.catch(() => undefined);
      const c = client;
      client = null;
      local.removeAllListeners();
      await c?.end().catch(() => undefined);
    },
  };
}

/** Channel names are ours, but LISTEN takes an identifier, not a parameter. */
function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
