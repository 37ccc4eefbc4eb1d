import type { Every } from '../../../../core/every.ts';
import { enqueue, fits, settleExpired } from './budget.ts';
import type { RuntimeLogSink, SinkState } from './state.ts';
import { flush } from './write.ts';

/** A chatty app must not grow the queue without bound while the database is slow. */
const MAX_QUEUED = 20_000;

/**
 * The sink's interface over its state and timer (createRuntimeLogSink makes them). A line's steps
 * are written here, not behind one more call: an app may log on every request.
 */
export function sinkOf(s: SinkState, timer: Every): RuntimeLogSink {
  return {
    log(deploymentId, line, stream) {
      if (s.queue.length >= MAX_QUEUED) {
        s.dropped.set(deploymentId, (s.dropped.get(deploymentId) ?? 0) + 1);
        return;
      }
      const at = s.deps.clock.now();
      if (stream !== 'supervisor' && !fits(s, deploymentId, line, at)) return;
      enqueue(s, deploymentId, line, at);
    },
    flush: () => flush(s),
    async close() {
      await timer.stop();
      settleExpired(s, true);
      await flush(s);
    },
  };
}
