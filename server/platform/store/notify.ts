import { EventEmitter } from 'node:events';
import { close, ready } from './notify/connection.ts';
import { publish, subscribe } from './notify/publish.ts';
import { createPgNotifierState, type PostgresNotifierOptions } from './notify/state.ts';

export type { PostgresNotifierOptions } from './notify/state.ts';

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

/**
 * LISTEN on one dedicated connection per process (a pooled one would be handed to other queries),
 * opened on the first subscription and re-opened with backoff whenever it drops. Its parts, each
 * over one PgNotifierState: notify/state.ts, notify/connection.ts (the listening connection,
 * ready, close) and notify/publish.ts (publish, subscribe).
 */
export function createPostgresNotifier(opts: PostgresNotifierOptions): Notifier {
  const st = createPgNotifierState(opts);
  return {
    crossProcess: true,
    publish: (channel, payload, publishOpts) => publish(st, channel, payload, publishOpts?.localNow),
    subscribe: (channel, listener) => subscribe(st, channel, listener),
    ready: () => ready(st),
    close: () => close(st),
  };
}
