import { every } from '../../core/every.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import {
  addRequest,
  emptyDelta,
  mergeDelta,
  writeRollupDeltas,
  type RollupDelta,
} from './record-requests.ts';

export interface RequestRecorder {
  /** Called by the edge once per response: only adds to counters in memory. */
  record(r: { projectId: string | null; status: number; durationMs: number; bytes: number }): void;
  /** Writes what was counted since the last flush. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface RequestRecorderOptions {
  /** How often the counts are written (ms); default 1000. */
  intervalMs?: number;
  /** Writes a batch of deltas; default: into the rollups of `deps.db`, in one transaction. */
  write?: (deltas: RollupDelta[]) => Promise<void>;
}

/**
 * Most (project, minute) counters held while the database is unreachable; past it the oldest are
 * dropped. That is hours of outage for hundreds of projects, whatever the traffic.
 */
const MAX_PENDING = 100_000;

/**
 * Keeps request recording off the request path: the edge counts each response into the
 * per-minute counters of its project in memory (the same sums the rollups keep), and every
 * `intervalMs` they are added to the rollups in one transaction. A failed write keeps its counts
 * for the next try.
 */
export function createRequestRecorder(
  deps: Pick<Deps, 'db' | 'metrics' | 'clock' | 'log'>,
  opts: RequestRecorderOptions = {},
): RequestRecorder {
  const intervalMs = opts.intervalMs ?? 1000;
  const write = opts.write ?? ((deltas) => writeRollupDeltas(deps, deltas));
  /** Counters by project, then by minute (ms since the epoch). */
  let pending = new Map<string, Map<number, RollupDelta>>();
  let size = 0;
  let dropped = 0;
  let flushing: Promise<void> = Promise.resolve();

  const counterFor = (projectId: string, minuteMs: number): RollupDelta => {
    let minutes = pending.get(projectId);
    if (!minutes) {
      minutes = new Map();
      pending.set(projectId, minutes);
    }
    let d = minutes.get(minuteMs);
    if (!d) {
      d = emptyDelta(projectId, new Date(minuteMs).toISOString());
      minutes.set(minuteMs, d);
      size++;
      if (size > MAX_PENDING) dropOldest();
    }
    return d;
  };

  const dropOldest = () => {
    let oldest: { projectId: string; minuteMs: number; requests: number } | null = null;
    for (const [projectId, minutes] of pending) {
      for (const [minuteMs, d] of minutes) {
        if (!oldest || minuteMs < oldest.minuteMs) oldest = { projectId, minuteMs, requests: d.requests };
      }
    }
    if (!oldest) return;
    pending.get(oldest.projectId)!.delete(oldest.minuteMs);
    size--;
    dropped += oldest.requests;
  };

  const flush = () => {
    flushing = flushing.then(async () => {
      if (size === 0) return;
      const batch = pending;
      pending = new Map();
      size = 0;
      const deltas = [...batch.values()].flatMap((minutes) => [...minutes.values()]);
      try {
        await write(deltas);
      } catch (err) {
        deps.log.warn(
          { err, counters: deltas.length },
          'could not record edge requests; keeping the counts for the next try',
        );
        for (const d of deltas) {
          mergeDelta(counterFor(d.projectId, Date.parse(d.minute)), d);
        }
      }
      if (dropped) {
        deps.log.warn({ dropped }, 'edge request counts dropped while the database was unreachable');
        dropped = 0;
      }
    });
    return flushing;
  };
  // flush() reports its own errors and never rejects.
  const timer = every(intervalMs, flush, {
    clock: deps.clock,
    log: deps.log,
    name: 'recording edge requests',
  });
  return {
    record(r) {
      if (!r.projectId) return;
      const minuteMs = Math.floor(deps.clock.now().getTime() / 60_000) * 60_000;
      addRequest(counterFor(r.projectId, minuteMs), r.status, r.durationMs, r.bytes);
    },
    flush,
    async close() {
      await timer.stop();
      await flush();
    },
  };
}
