import type { Kysely } from 'kysely';
import { describeBytes } from '../../../core/format.ts';
import type { Clock } from '../../../core/clock.ts';
import { every } from '../../../core/every.ts';
import type { Database } from '../../../platform/store/schema.ts';
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
const HOUR = 3_600_000;
/** The default of SLIPWAY_RUNTIME_LOG_LIMIT. */
const DEFAULT_LIMIT_BYTES = 5 * 1024 * 1024;

/** What one deployment stored in its current hour. */
interface Budget {
  since: number;
  bytes: number;
  cut: boolean;
  droppedLines: number;
  droppedBytes: number;
}

/**
 * Batches server apps' output into deployment_logs (type `runtime`), one insert per batch every
 * `flushMs`: an app logging per request would otherwise cost a write per line.
 *
 * Each deployment stores at most `limitBytes` of output per hour (SLIPWAY_RUNTIME_LOG_LIMIT):
 * an app printing in a loop would otherwise grow the shared database by megabytes a second.
 * Past it, lines are dropped until the hour is over, and the log says so when it is cut and how
 * much was left out when the hour ends. The supervisor's own lines (starts, crashes, stops) are
 * few and always kept. The count is per edge process: each edge runs its own copy of an app.
 */
export function createRuntimeLogSink(
  deps: { db: Kysely<Database>; clock: Clock },
  opts: { flushMs?: number; onError?: (err: unknown) => void; limitBytes?: number } = {},
): RuntimeLogSink {
  let queue: { deployment_id: string; type: 'runtime'; at: string; line: string }[] = [];
  const dropped = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();
  const limitBytes = opts.limitBytes ?? DEFAULT_LIMIT_BYTES;
  const limit = describeBytes(limitBytes);
  const budgets = new Map<string, Budget>();

  const enqueue = (deploymentId: string, line: string, at: Date) =>
    queue.push({ deployment_id: deploymentId, type: 'runtime', at: at.toISOString(), line });

  /** Ends a deployment's hour: one line with what was left out, if anything was. */
  const settle = (deploymentId: string, b: Budget, at: Date) => {
    if (b.droppedLines === 0) return;
    const what = b.droppedLines === 1 ? '1 line' : `${b.droppedLines} lines`;
    enqueue(
      deploymentId,
      `[slipway] ${what} of output (${describeBytes(b.droppedBytes)}) left out in the hour from ${new Date(b.since).toISOString()}: over the ${limit} an hour limit (SLIPWAY_RUNTIME_LOG_LIMIT)`,
      at,
    );
  };

  /** True when the line fits in the deployment's hour; counts it either way. */
  const fits = (deploymentId: string, line: string, at: Date): boolean => {
    const t = at.getTime();
    let b = budgets.get(deploymentId);
    if (!b || t - b.since >= HOUR) {
      if (b) settle(deploymentId, b, at);
      b = { since: t, bytes: 0, cut: false, droppedLines: 0, droppedBytes: 0 };
      budgets.set(deploymentId, b);
    }
    const bytes = Buffer.byteLength(line);
    if (!b.cut && b.bytes + bytes <= limitBytes) {
      b.bytes += bytes;
      return true;
    }
    b.droppedLines++;
    b.droppedBytes += bytes;
    if (!b.cut) {
      b.cut = true;
      enqueue(
        deploymentId,
        `[slipway] Runtime log cut at ${limit} this hour (SLIPWAY_RUNTIME_LOG_LIMIT): lines until ${new Date(b.since + HOUR).toISOString()} are not stored; the app goes on.`,
        at,
      );
    }
    return false;
  };

  /** Settles the hours that are over, so the summary does not wait for the app's next line. */
  const settleExpired = (all = false) => {
    const at = deps.clock.now();
    for (const [id, b] of budgets) {
      if (!all && at.getTime() - b.since < HOUR) continue;
      settle(id, b, at);
      budgets.delete(id);
    }
  };

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
  // flush() chains its writes and reports its own errors: the tick does not wait for it.
  const timer = every(
    opts.flushMs ?? 250,
    () => {
      settleExpired();
      if (queue.length > 0 || dropped.size > 0) void flush();
    },
    { clock: deps.clock, onError: (err) => opts.onError?.(err) },
  );

  return {
    log(deploymentId, line, stream) {
      if (queue.length >= MAX_QUEUED) {
        dropped.set(deploymentId, (dropped.get(deploymentId) ?? 0) + 1);
        return;
      }
      const at = deps.clock.now();
      if (stream !== 'supervisor' && !fits(deploymentId, line, at)) return;
      enqueue(deploymentId, line, at);
    },
    flush,
    async close() {
      await timer.stop();
      settleExpired(true);
      await flush();
    },
  };
}
