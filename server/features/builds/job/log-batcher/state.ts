import type { LogBatcherOptions, LogEntry, Timers } from './types.ts';

const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * What one log batcher keeps (createLogBatcher makes it once), passed to the functions that
 * queue and write rather than closed over.
 */
export interface LogBatcherState {
  opts: LogBatcherOptions;
  maxBytes: number;
  maxLines: number;
  maxWaitMs: number;
  gapMs: number;
  timers: Timers;
  /** The filling batch. */
  pending: LogEntry[];
  pendingBytes: number;
  /** Set while a batch is being written, or resting after its write. */
  busy: Promise<void> | undefined;
  timer: unknown;
  /** The timer ran out while a write was busy: the filling batch goes as soon as it is done. */
  due: boolean;
  /** Producers waiting on `ready()` for the filling batch to be taken. */
  waiters: (() => void)[];
}

export function createLogBatcherState(opts: LogBatcherOptions): LogBatcherState {
  return {
    opts,
    maxBytes: opts.maxBytes ?? 64 * 1024,
    maxLines: opts.maxLines ?? 200,
    maxWaitMs: opts.maxWaitMs ?? 250,
    gapMs: opts.gapMs ?? 5,
    timers: opts.timers ?? systemTimers,
    pending: [],
    pendingBytes: 0,
    busy: undefined,
    timer: undefined,
    due: false,
    waiters: [],
  };
}

/** The filling batch holds as many lines or bytes as a batch takes. */
export const full = (s: LogBatcherState) => s.pending.length >= s.maxLines || s.pendingBytes >= s.maxBytes;
