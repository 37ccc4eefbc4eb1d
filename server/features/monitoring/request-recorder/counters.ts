import { emptyDelta, mergeDelta, type RollupDelta } from '../record-requests.ts';
import type { RecorderState } from './state.ts';

/**
 * Most (project, minute) counters held while the database is unreachable; past it the oldest are
 * dropped. That is hours of outage for hundreds of projects, whatever the traffic.
 */
const MAX_PENDING = 100_000;

/** The counter of a project's minute, made when it has none. */
export function counterFor(s: RecorderState, projectId: string, minuteMs: number): RollupDelta {
  let minutes = s.pending.get(projectId);
  if (!minutes) {
    minutes = new Map();
    s.pending.set(projectId, minutes);
  }
  let d = minutes.get(minuteMs);
  if (!d) {
    d = emptyDelta(projectId, new Date(minuteMs).toISOString());
    minutes.set(minuteMs, d);
    s.size++;
    if (s.size > MAX_PENDING) dropOldest(s);
  }
  return d;
}

function dropOldest(s: RecorderState): void {
  let oldest: { projectId: string; minuteMs: number; requests: number } | null = null;
  for (const [projectId, minutes] of s.pending) {
    for (const [minuteMs, d] of minutes) {
      if (!oldest || minuteMs < oldest.minuteMs) oldest = { projectId, minuteMs, requests: d.requests };
    }
  }
  if (!oldest) return;
  s.pending.get(oldest.projectId)!.delete(oldest.minuteMs);
  s.size--;
  s.dropped += oldest.requests;
}

/** Writes what was counted; a failed write puts its counts back for the next try. */
export function flush(s: RecorderState): Promise<void> {
  s.flushing = s.flushing.then(() => writePending(s));
  return s.flushing;
}

async function writePending(s: RecorderState): Promise<void> {
  if (s.size === 0) return;
  const batch = s.pending;
  s.pending = new Map();
  s.size = 0;
  const deltas = [...batch.values()].flatMap((minutes) => [...minutes.values()]);
  try {
    await s.write(deltas);
  } catch (err) {
    s.deps.log.warn(
      { err, counters: deltas.length },
      'could not record edge requests; keeping the counts for the next try',
    );
    for (const d of deltas) {
      mergeDelta(counterFor(s, d.projectId, Date.parse(d.minute)), d);
    }
  }
  if (s.dropped) {
    s.deps.log.warn({ dropped: s.dropped }, 'edge request counts dropped while the database was unreachable');
    s.dropped = 0;
  }
}
