import { every } from '../../core/every.ts';
import { addRequest } from './record-requests.ts';
import { counterFor, flush } from './request-recorder/counters.ts';
import {
  createRecorderState,
  type RecorderDeps,
  type RequestRecorderOptions,
} from './request-recorder/state.ts';

export type { RequestRecorderOptions } from './request-recorder/state.ts';

export interface RequestRecorder {
  /** Called by the edge once per response: only adds to counters in memory. */
  record(r: { projectId: string | null; status: number; durationMs: number; bytes: number }): void;
  /** Writes what was counted since the last flush. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Keeps request recording off the request path: the edge counts each response into the
 * per-minute counters of its project in memory (the same sums the rollups keep), and every
 * `intervalMs` they are added to the rollups in one transaction. A failed write keeps its counts
 * for the next try. Its parts, in request-recorder/: state.ts (the counters held), counters.ts
 * (a minute's counter, the bound, the write).
 */
export function createRequestRecorder(
  deps: RecorderDeps,
  opts: RequestRecorderOptions = {},
): RequestRecorder {
  const s = createRecorderState(deps, opts);
  const flushNow = () => flush(s);
  // flush() reports its own errors and never rejects.
  const timer = every(opts.intervalMs ?? 1000, flushNow, {
    clock: deps.clock,
    log: deps.log,
    name: 'recording edge requests',
  });
  return {
    // A response's steps are written here, not behind one more call.
    record(r) {
      if (!r.projectId) return;
      const minuteMs = Math.floor(deps.clock.now().getTime() / 60_000) * 60_000;
      addRequest(counterFor(s, r.projectId, minuteMs), r.status, r.durationMs, r.bytes);
    },
    flush: flushNow,
    async close() {
      await timer.stop();
      await flushNow();
    },
  };
}
