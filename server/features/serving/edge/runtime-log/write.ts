import { every, type Every } from '../../../../core/every.ts';
import { settleExpired } from './budget.ts';
import type { SinkState } from './state.ts';

const BATCH = 500;

/** Writes the queued lines, and one line for each deployment whose lines were dropped. */
async function write(s: SinkState): Promise<void> {
  const rows = s.queue;
  s.queue = [];
  const at = s.deps.clock.now().toISOString();
  for (const [deploymentId, n] of s.dropped) {
    rows.push({
      deployment_id: deploymentId,
      type: 'runtime',
      at,
      line: `[slipway] ${n} lines dropped: the app logged faster than they could be stored`,
    });
  }
  s.dropped.clear();
  for (let i = 0; i < rows.length; i += BATCH) {
    await s.deps.db
      .insertInto('deployment_logs')
      .values(rows.slice(i, i + BATCH))
      .execute();
  }
}

/** Writes what is queued now, after the write before; reports its own errors. */
export function flush(s: SinkState): Promise<void> {
  s.flushing = s.flushing.then(() => write(s)).catch((err: unknown) => s.opts.onError?.(err));
  return s.flushing;
}

/** Every `flushMs` (default 250), settles the hours that are over and writes what is queued. */
export function startFlushing(s: SinkState): Every {
  // flush() chains its writes and reports its own errors: the tick does not wait for it.
  return every(
    s.opts.flushMs ?? 250,
    () => {
      settleExpired(s);
      if (s.queue.length > 0 || s.dropped.size > 0) void flush(s);
    },
    { clock: s.deps.clock, onError: (err) => s.opts.onError?.(err) },
  );
}
