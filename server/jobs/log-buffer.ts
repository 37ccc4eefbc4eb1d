import { sql } from 'kysely';
import type { LogType } from '../../api/schemas/deployments.ts';
import { describeBytes } from '../builder/format.ts';
import { appendLog } from '../services/deployments/deployment-logs.ts';
import type { Deps } from '../services/deps.ts';

export interface LogBuffer {
  /**
   * Queues a line. `build` lines count against the deployment's limit and are dropped past it;
   * `error` lines (why the build failed) are always kept.
   */
  push(type: LogType, line: string): void;
  /**
   * Queues a `build` line of the build job's own ("==> Deploying"), kept even past the limit: the
   * job writes a handful per attempt, and they say where the deployment got to.
   */
  note(line: string): void;
  /** Writes everything pushed so far; call before every state change so logs precede it. */
  flush(): Promise<void>;
  /**
   * Flushes, with one line saying how much build output was left out if any was. Call before the
   * deployment's final state change: followers stop reading the log there.
   */
  end(): Promise<void>;
}

export interface LogBufferOptions {
  /** Bytes of `build` lines stored per deployment (config.buildLogLimitBytes). */
  limitBytes: number;
  /** Longest a line waits before it is written (default 100 ms). */
  intervalMs?: number;
}

/**
 * Build output arrives a line at a time; writing each line in its own statement would make a
 * chatty build slow. Lines are written in batches, at most `intervalMs` after they arrive.
 *
 * The stored build log is bounded per deployment: a build printing 1.5 million lines once grew
 * the database by 315 MB in seconds. Past the limit `build` lines are dropped here, before they
 * take memory or a write, and the log says so once; the build itself goes on. What earlier
 * attempts of the same deployment stored counts too, so retries cannot multiply the limit.
 */
export async function createLogBuffer(
  deps: Pick<Deps, 'db' | 'clock' | 'log' | 'store'>,
  deploymentId: string,
  opts: LogBufferOptions,
): Promise<LogBuffer> {
  const intervalMs = opts.intervalMs ?? 100;
  const limit = describeBytes(opts.limitBytes);
  const already = await deps.db
    .selectFrom('deployment_logs')
    // octet_length: the limit is in bytes, and length() counts characters on both databases.
    .select(sql<number | string | null>`sum(octet_length(line))`.as('bytes'))
    .where('deployment_id', '=', deploymentId)
    .where('type', '=', 'build')
    .executeTakeFirst();
  let storedBytes = Number(already?.bytes ?? 0);
  let cut = false;
  let droppedLines = 0;
  let droppedBytes = 0;

  let pending: { type: LogType; line: string }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  const write = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return chain;
    chain = chain.then(async () => {
      for (const type of ['build', 'runtime', 'error'] as const) {
        const lines = batch.filter((b) => b.type === type).map((b) => b.line);
        if (lines.length) await appendLog(deps, deploymentId, type, lines);
      }
    });
    chain = chain.catch((err: unknown) =>
      deps.log.warn({ err, deploymentId }, 'could not write build log lines'),
    );
    return chain;
  };

  const queue = (type: LogType, line: string) => {
    pending.push({ type, line });
    if (pending.length >= 200) void write();
    else timer ??= setTimeout(() => void write(), intervalMs);
  };

  /** Our own lines count towards the stored bytes but are never dropped. */
  const note = (line: string) => {
    storedBytes += Buffer.byteLength(line);
    queue('build', line);
  };

  return {
    push(type, line) {
      if (type !== 'build') return queue(type, line);
      const bytes = Buffer.byteLength(line);
      if (cut || storedBytes + bytes > opts.limitBytes) {
        droppedLines++;
        droppedBytes += bytes;
        if (!cut) {
          cut = true;
          note(
            `Build log cut at ${limit} (SLIPWAY_BUILD_LOG_LIMIT): later lines are not stored; the build goes on.`,
          );
        }
        return;
      }
      storedBytes += bytes;
      queue('build', line);
    },
    note,
    flush: write,
    end() {
      if (droppedLines > 0) {
        const what = droppedLines === 1 ? '1 line' : `${droppedLines} lines`;
        note(
          `Build log: ${what} of output (${describeBytes(droppedBytes)}) left out past the ${limit} limit (SLIPWAY_BUILD_LOG_LIMIT).`,
        );
        droppedLines = 0;
        droppedBytes = 0;
      }
      return write();
    },
  };
}
