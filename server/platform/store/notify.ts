import { EventEmitter } from 'node:events';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

/** Job wake-ups: the payload is the job kind. */
export const JOBS_CHANNEL = 'slipway_jobs';

export interface PublishOptions {
  /**
   * This process's listeners hear it before `publish` returns. On PostgreSQL they otherwise hear
   * it when the database echoes it back, a few milliseconds later; with this the echo is
   * skipped, so they still hear it once.
   */
  localNow?: boolean;
}

/**
 * Wake-ups between processes. On PostgreSQL they travel by LISTEN/NOTIFY, so every process on the
 * database hears them; on SQLite (one process) an in-process emitter does. They are hints: a lost
 * one costs a poll interval, never correctness, because every consumer also polls.
 */
export interface Notifier {
  /** True when other processes hear what this one publishes (PostgreSQL). */
  crossProcess: boolean;
  /**
   * Sends after the caller's transaction committed; never throws. close() waits for what is under
   * way. This process's listeners hear it too: at once on SQLite, through the database on PostgreSQL.
   */
  publish(channel: string, payload: string, opts?: PublishOptions): void;
  /**
   * `payload` is null when notifications may have been missed (the listening connection was
   * re-established): the listener should re-check whatever it caches.
   */
  subscribe(channel: string, listener: (payload: string | null) => void): () => void;
  /**
   * Resolves once every subscription made so far is live: on PostgreSQL, the listening connection
   * is up and each channel's LISTEN has run (a NOTIFY sent before that is not heard).
   */
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
  /** The channels whose LISTEN is in effect on the current connection: what echoes come back. */
  let listening = new Set<string>();
  /**
   * Echoes still to come of what this process published with `localNow` (its listeners heard it
   * already), counted by channel and payload. Another process's identical notification may be
   * skipped instead of the echo: the echo is then delivered in its place, later, so nothing is
   * heard earlier than it was sent.
   */
  const echoes = new Map<string, number>();
  const echoKey = (channel: string, payload: string) => `${channel}\u0000${payload}`;
  const takeEcho = (key: string) => {
    const n = echoes.get(key);
    if (n === undefined) return false;
    if (n === 1) echoes.delete(key);
    else echoes.set(key, n - 1);
    return true;
  };
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let delay = retryMs;
  let timer: NodeJS.Timeout | null = null;
  let everConnected = false;
  /** NOTIFYs on their way: a command that exits right after publishing must not lose them. */
  const sending = new Set<Promise<unknown>>();
  /** LISTENs on their way on the open connection: `ready()` waits for them. */
  const listens = new Set<Promise<void>>();

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
        if (client === c) {
          client = null;
          // Nothing more comes on this connection; the reconnect tells listeners to re-check.
          listening = new Set();
          echoes.clear();
        }
        if (err) onError(err, 'notification connection lost');
        void c.end().catch(() => undefined);
        scheduleReconnect();
      };
      c.on('error', drop);
      c.on('end', () => drop());
      c.on('notification', (msg) => {
        if (!channels.has(msg.channel)) return;
        const payload = msg.payload ?? '';
        if (!takeEcho(echoKey(msg.channel, payload))) local.emit(msg.channel, payload);
      });
      try {
        await c.connect();
        // A channel subscribed meanwhile joins the set and this loop (sets iterate what is added).
        for (const ch of channels) await c.query(`LISTEN ${quoteIdent(ch)}`);
        if (closed) {
          await c.end().catch(() => undefined);
          return;
        }
        client = c;
        listening = new Set(channels);
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
    publish(channel, payload, publishOpts) {
      if (closed) return;
      let echo: string | undefined;
      if (publishOpts?.localNow) {
        local.emit(channel, payload);
        // Only a channel listened to now echoes back.
        if (client && listening.has(channel)) {
          echo = echoKey(channel, payload);
          echoes.set(echo, (echoes.get(echo) ?? 0) + 1);
        }
      }
      const sent = sql`select pg_notify(${channel}, ${payload})`
        .execute(opts.db)
        .catch((err: unknown) => {
          onError(err, 'notify failed');
          if (echo) takeEcho(echo);
        })
        .finally(() => sending.delete(sent));
      sending.add(sent);
    },
    subscribe(channel, listener) {
      local.on(channel, listener);
      if (!channels.has(channel)) {
        channels.add(channel);
        const c = client;
        if (c) {
          const listen: Promise<void> = c
            .query(`LISTEN ${quoteIdent(channel)}`)
            .then(
              () => {
                if (client === c) listening.add(channel);
              },
              (err: unknown) => onError(err, 'listen failed'),
            )
            .finally(() => listens.delete(listen));
          listens.add(listen);
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
      // A channel subscribed once the connection was open is live when its LISTEN has run: a
      // NOTIFY sent before that is not heard.
      await Promise.all(listens);
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
