import { createLogBatcherState, full } from './log-batcher/state.ts';
import type { LogBatcher, LogBatcherOptions } from './log-batcher/types.ts';
import { arm, writeNext } from './log-batcher/write.ts';

export type { LogBatcher, LogBatcherOptions, LogEntry, Timers } from './log-batcher/types.ts';

/**
 * Coalesces log lines into batches by size and time, and writes them one at a time with a rest
 * between writes, so that a build printing as fast as it can costs the API one insert per batch
 * instead of one per line, and never a long run of inserts with no request served in between.
 *
 * What is not yet stored at any moment is the batch being written and the one filling (at most
 * `maxBytes` or `maxLines` each, since the producer waits on `ready()`): that is what a crash
 * can lose. A write is one statement per log type, so a batch is stored whole or not at all. The
 * pieces are in `log-batcher/`, each taking the one LogBatcherState made here.
 */
export function createLogBatcher(opts: LogBatcherOptions): LogBatcher {
  const s = createLogBatcherState(opts);
  return {
    add(entry, bytes) {
      s.pending.push(entry);
      s.pendingBytes += bytes;
      if (full(s)) {
        if (!s.busy) void writeNext(s, true);
      } else arm(s);
    },
    ready() {
      if (!full(s)) return undefined;
      return new Promise<void>((resolve) => s.waiters.push(resolve));
    },
    async flush() {
      // Writes in progress first, then whatever is queued (even while a write rests).
      while (s.busy) await s.busy;
      await writeNext(s, false);
    },
  };
}
