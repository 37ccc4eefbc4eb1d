import { full, type LogBatcherState } from './state.ts';
import type { LogEntry } from './types.ts';

/** Takes the filling batch and writes it after the one before; resolves once it is stored. */
export function writeNext(s: LogBatcherState, rest: boolean): Promise<void> {
  if (s.timer !== undefined) s.timers.clearTimeout(s.timer);
  s.timer = undefined;
  s.due = false;
  let batch: LogEntry[] | undefined;
  // Taken now when nothing is being written; otherwise once the write before is done, so the
  // lines that came meanwhile join this batch.
  if (!s.busy) batch = take(s);
  const before = s.busy ?? Promise.resolve();
  const run = before.then(async () => {
    batch ??= take(s);
    await writeBatch(s, batch);
    if (rest && s.gapMs > 0) await new Promise<void>((r) => s.timers.setTimeout(r, s.gapMs));
  });
  s.busy = run;
  void run.then(() => {
    if (s.busy !== run) return;
    s.busy = undefined;
    // What filled up while this batch was written goes next; anything less waits for its timer.
    if (full(s) || s.due) void writeNext(s, true);
    else if (s.pending.length > 0) arm(s);
  });
  return run;
}

/** Starts the filling batch's timer, unless it runs already. */
export function arm(s: LogBatcherState): void {
  s.timer ??= s.timers.setTimeout(() => {
    s.timer = undefined;
    if (s.busy) s.due = true;
    else void writeNext(s, true);
  }, s.maxWaitMs);
}

/** Empties the filling batch, waking the producers waiting for room; answers what it held. */
function take(s: LogBatcherState): LogEntry[] {
  const batch = s.pending;
  s.pending = [];
  s.pendingBytes = 0;
  const woken = s.waiters;
  s.waiters = [];
  for (const wake of woken) wake();
  return batch;
}

/**
 * Lines queued past a full batch without waiting (the end of a flood, written at once) go in
 * statements of maxLines rows, each its own turn of the event loop: one statement of thousands
 * of rows would hold requests up, and SQLite takes at most 32766 values.
 */
async function writeBatch(s: LogBatcherState, batch: LogEntry[]): Promise<void> {
  for (let i = 0; i < batch.length; i += s.maxLines) {
    if (i > 0) await new Promise<void>((r) => setImmediate(r));
    try {
      await s.opts.write(batch.slice(i, i + s.maxLines));
    } catch (err) {
      s.opts.onError(err);
    }
  }
}
