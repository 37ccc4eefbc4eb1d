import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import type { Database } from '../store/schema.ts';
import type { RuntimeStream } from './runtime.ts';

export interface RuntimeLogSink {
  /** Queues one line of a deployment's `runtime` log; the shape RuntimeSupervisorOptions.log takes. */
  log(deploymentId: string, line: string, stream: RuntimeStream): void;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

const BATCH = 500;
/** A chatty app must not grow the queue without bound while the database is slow. */
const MAX_QUEUED = 20_000;

/**
 * Batches server apps' output into deployment_logs (type `runtime`), one insert per batch every
 * `flushMs`: an app logging per request would otherwise cost a write per line.
 */
export function createRuntimeLogSink(
  deps: { db: Kysely<Database>; clock: Clock },
  opts: { flushMs?: number; onError?: (err: unknown) => void } = {},
): RuntimeLogSink {
  let queue: { deployment_id: string; type: 'runtime'; at: string; line: string }[] = [];
  const dropped = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();

  const write = async () => {
    const rows = queue;
    queue = [];
    const at = deps.clock.now().toISOString();
    for (const [deploymentId, n] of dropped) {
      rows.push({
        deployment_id: deploymentId,
        type: 'runtime',
        at,
        line: `[slipway] ${n} lines dropped: the app logged faster than they could be stored`,
      });
    }
    dropped.clear();
    for (let i = 0; i < rows.length; i += BATCH) {
      await deps.db
        .insertInto('deployment_logs')
        .values(rows.slice(i, i + BATCH))
        .execute();
    }
  };
  const flush = () => {
    flushing = flushing.then(write).catch((err: unknown) => opts.onError?.(err));
    return flushing;
  };
  const timer = setInterval(() => {
    if (queue.length > 0 || dropped.size > 0) void flush();
  }, opts.flushMs ?? 250);
  timer.unref();

  return {
    log(deploymentId, line) {
      if (queue.length >= MAX_QUEUED) {
        dropped.set(deploymentId, (dropped.get(deploymentId) ?? 0) + 1);
        return;
      }
      queue.push({ deployment_id: deploymentId, type: 'runtime', at: deps.clock.now().toISOString(), line });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
