import type { LogType } from '../../../../../api/schemas/deployments.ts';

export interface LogEntry {
  type: LogType;
  line: string;
}

/** Timers, injected so tests can move time by hand. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface LogBatcherOptions {
  /** Stores one batch, its lines in order; one batch is written at a time. */
  write(batch: readonly LogEntry[]): Promise<void>;
  /** A write that failed: its lines are lost, later batches are still written. */
  onError(err: unknown): void;
  /** A batch is written once it holds this many bytes (default 64 KiB)... */
  maxBytes?: number;
  /**
   * ...or this many lines (default 200): rows, not bytes, are what an insert costs (on SQLite
   * about 3.5 µs a row, and the event loop waits for it: 200 rows hold it up under a millisecond)...
   */
  maxLines?: number;
  /** ...or once its first line has waited this long (default 250 ms). */
  maxWaitMs?: number;
  /**
   * Rest between two writes of the same log (default 5 ms): a timer, not a microtask, so the
   * requests waiting on the event loop are served between batches.
   */
  gapMs?: number;
  timers?: Timers;
}

export interface LogBatcher {
  /** Queues a line; `bytes` is what it counts towards `maxBytes`. */
  add(entry: LogEntry, bytes: number): void;
  /**
   * A promise while the filling batch is full (the previous one is still being written or
   * resting): whoever produces lines waits for it before adding more. Undefined otherwise.
   */
  ready(): Promise<void> | undefined;
  /** Writes everything queued now, resting for nothing; resolves once it is stored. */
  flush(): Promise<void>;
}
