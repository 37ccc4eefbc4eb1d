import type { Deps } from '../services/deps.ts';
import { recordRequests, type ServedRequest } from '../services/monitoring/record-requests.ts';

export interface RequestRecorder {
  /** Called by the edge once per response: only pushes to a buffer. */
  record(r: { projectId: string | null; status: number; durationMs: number; bytes: number }): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Most records held while the database is slow; past it the oldest are counted as dropped. */
const MAX_BUFFERED = 100_000;

/**
 * Keeps request recording off the request path: the edge pushes to memory, and the buffer is
 * merged into the per-minute rollups every `intervalMs` in one transaction.
 */
export function createRequestRecorder(
  deps: Pick<Deps, 'db' | 'clock' | 'log'>,
  intervalMs = 1000,
): RequestRecorder {
  let buffer: ServedRequest[] = [];
  let dropped = 0;
  let flushing: Promise<void> = Promise.resolve();
  const flush = () => {
    flushing = flushing.then(async () => {
      if (buffer.length === 0) return;
      const batch = buffer;
      buffer = [];
      try {
        await recordRequests(deps.db, batch);
      } catch (err) {
        deps.log.warn(
          { err, count: batch.length },
          'could not record edge requests; keeping them for the next try',
        );
        buffer = batch.concat(buffer).slice(-MAX_BUFFERED);
      }
      if (dropped) {
        deps.log.warn({ dropped }, 'edge request records dropped while the database was slow');
        dropped = 0;
      }
    });
    return flushing;
  };
  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return {
    record(r) {
      if (!r.projectId) return;
      if (buffer.length >= MAX_BUFFERED) {
        buffer.shift();
        dropped++;
      }
      buffer.push({
        projectId: r.projectId,
        at: deps.clock.now(),
        status: r.status,
        durationMs: r.durationMs,
        bytes: r.bytes,
      });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
