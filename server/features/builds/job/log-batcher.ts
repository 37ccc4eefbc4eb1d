import type { LogType } from '../../../../api/schemas/deployments.ts';

export interface LogEntry {
  type: LogType;
  line: string;
}

/** Timers, injected so tests can move time by hand. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

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

/**
 * Coalesces log lines into batches by size and time, and writes them one at a time with a rest
 * between writes, so that a build printing as fast as it can costs the API one insert per batch
 * instead of one per line, and never a long run of inserts with no request served in between.
 *
 * What is not yet stored at any moment is the batch being written and the one filling (at most
 * `maxBytes` or `maxLines` each, since the producer waits on `ready()`): that is what a crash
 * can lose. A write is one statement per log type, so a batch is stored whole or not at all.
 */
export function createLogBatcher(opts: LogBatcherOptions): LogBatcher {
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  const maxLines = opts.maxLines ?? 200;
  const maxWaitMs = opts.maxWaitMs ?? 250;
  const gapMs = opts.gapMs ?? 5;
  const timers = opts.timers ?? systemTimers;

  let pending: LogEntry[] = [];
  let pendingBytes = 0;
  /** Set while a batch is being written, or resting after its write. */
  let busy: Promise<void> | undefined;
  let timer: unknown;
  /** The timer ran out while a write was busy: the filling batch goes as soon as it is done. */
  let due = false;
  let waiters: (() => void)[] = [];

  const full = () => pending.length >= maxLines || pendingBytes >= maxBytes;

  /** Takes the filling batch and writes it after the one before; resolves once it is stored. */
  const writeNext = (rest: boolean): Promise<void> => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    due = false;
    let batch: LogEntry[] | undefined;
    const take = () => {
      batch = pending;
      pending = [];
      pendingBytes = 0;
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
      return batch;
    };
    // Taken now when nothing is being written; otherwise once the write before is done, so the
    // lines that came meanwhile join this batch.
    if (!busy) take();
    const before = busy ?? Promise.resolve();
    const run = before.then(async () => {
      batch ??= take();
      // Lines queued past a full batch without waiting (the end of a flood, written at once)
      // go in statements of maxLines rows, each its own turn of the event loop: one statement
      // of thousands of rows would hold requests up, and SQLite takes at most 32766 values.
      for (let i = 0; i < batch.length; i += maxLines) {
        if (i > 0) await new Promise<void>((r) => setImmediate(r));
        try {
          await opts.write(batch.slice(i, i + maxLines));
        } catch (err) {
          opts.onError(err);
        }
      }
      if (rest && gapMs > 0) await new Promise<void>((r) => timers.setTimeout(r, gapMs));
    });
    busy = run;
    void run.then(() => {
      if (busy !== run) return;
      busy = undefined;
      // What filled up while this batch was written goes next; anything less waits for its timer.
      if (full() || due) void writeNext(true);
      else if (pending.length > 0) arm();
    });
    return run;
  };

  const arm = () => {
    timer ??= timers.setTimeout(() => {
      timer = undefined;
      if (busy) due = true;
      else void writeNext(true);
    }, maxWaitMs);
  };

  return {
    add(entry, bytes) {
      pending.push(entry);
      pendingBytes += bytes;
      if (full()) {
        if (!busy) void writeNext(true);
      } else arm();
    },
    ready() {
      if (!full()) return undefined;
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
    async flush() {
      // Writes in progress first, then whatever is queued (even while a write rests).
      while (busy) await busy;
      await writeNext(false);
    },
  };
}
