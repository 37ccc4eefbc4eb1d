import { sql } from 'kysely';
import type { LogType } from '../../api/schemas/deployments.ts';
import type { OutputBudget } from '../builder/run-command.ts';
import { describeBytes, describeElapsed } from '../lib/format.ts';
import { lineCost, MIN_LINE_COST } from '../builder/log-cost.ts';
import { DEFAULT_OUTPUT_PACE, type OutputPace } from '../builder/output-pace.ts';
import { appendLog } from '../services/deployments/deployment-logs.ts';
import type { Deps } from '../services/deps.ts';
import { createLogBatcher, type LogBatcherOptions, type LogEntry } from './log-batcher.ts';

export interface LogBuffer {
  /**
   * Queues a line. `build` lines count against the deployment's limit: past it, only the last
   * ones are kept; `error` lines (why the build failed) are always kept.
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
  /** What the builder's commands may send: past the limit, their output is dropped unread at the pipe. */
  budget: OutputBudget;
}

export interface LogBufferOptions {
  /** Bytes of `build` lines stored per deployment (config.buildLogLimitBytes). */
  limitBytes: number;
  /** Batching (log-batcher.ts): sizes, times, timers; tests shorten them. */
  batch?: Omit<LogBatcherOptions, 'write' | 'onError'>;
  /** How fast the builder's commands' output past the head is read; default DEFAULT_OUTPUT_PACE. */
  pace?: OutputPace;
}

/** Where build output was left out, and how much. */
interface Gap {
  bytes: number;
}

/** Bytes of the end of the build output kept past the limit: a quarter of the limit, at most this. */
const MAX_TAIL = 256 * 1024;

/**
 * Build output arrives a line at a time; writing each line in its own statement would make a
 * chatty build slow for everyone. Lines are written in batches (log-batcher.ts).
 *
 * The stored build log is bounded per deployment: a build printing 1.5 million lines once grew
 * the database by 315 MB in seconds, and one printing 150 MB of short lines held the API up for
 * seconds at a time. The log keeps the head of the output, up to the limit less a quarter (at
 * most 256 KiB), and the last lines in that quarter: the end of a failed build's output says
 * why. Past the head, the builder's commands send nothing line by line: their pipes count the
 * bytes and keep only their last ones (`budget`), which come here when the command ends.
 * Lines that come anyway wait in a ring of the tail's size until the next note or flush writes
 * them. What earlier attempts of the same deployment stored counts too, so retries cannot
 * multiply the limit. Past the head, the pipes are read at a bounded pace (output-pace.ts): a
 * build printing faster waits on its own output, and the log says so.
 */
export async function createLogBuffer(
  deps: Pick<Deps, 'db' | 'clock' | 'log' | 'store'>,
  deploymentId: string,
  opts: LogBufferOptions,
): Promise<LogBuffer> {
  const limit = opts.limitBytes;
  const tailBytes = Math.min(Math.floor(limit / 4), MAX_TAIL);
  const already = await deps.db
    .selectFrom('deployment_logs')
    // octet_length: the limit is in bytes, and length() counts characters on both databases.
    .select(
      sql<
        number | string | null
      >`sum(case when octet_length(line) + 1 < ${MIN_LINE_COST} then ${MIN_LINE_COST} else octet_length(line) + 1 end)`.as(
        'bytes',
      ),
    )
    .where('deployment_id', '=', deploymentId)
    .where('type', '=', 'build')
    .executeTakeFirst();
  /** What is stored or queued of the build log, in `lineCost`s. */
  let used = Number(already?.bytes ?? 0);
  let cut = false;
  /**
   * Past the head: the latest lines, at most `limit - used` of them by cost, with a gap where
   * output was left out (dropped at the pipe, or pushed out of the front of the ring).
   */
  let ring: (string | Gap)[] = [];
  let ringStart = 0;
  let ringCost = 0;
  /** Bytes of build output left out in all. */
  let leftOutInAll = 0;
  const pace = opts.pace ?? DEFAULT_OUTPUT_PACE;
  /** How long the commands' pipes were left unread to keep the pace, in all. */
  let heldBackMs = 0;
  /** Whether a command's output was read at `pace.bytesPerSecond` (past the burst). */
  let slowed = false;

  const batcher = createLogBatcher({
    ...opts.batch,
    write: async (batch: readonly LogEntry[]) => {
      for (const type of ['build', 'runtime', 'error'] as const) {
        const lines = batch.filter((b) => b.type === type).map((b) => b.line);
        if (lines.length) await appendLog(deps, deploymentId, type, lines);
      }
    },
    onError: (err) => deps.log.warn({ err, deploymentId }, 'could not write build log lines'),
  });

  const headRoom = () => limit - tailBytes - used;
  const queue = (type: LogType, line: string) => batcher.add({ type, line }, Buffer.byteLength(line) + 1);

  /** Writes the ring's lines, with a line saying how much was left out at each gap. */
  const writeRing = () => {
    const entries = ring.slice(ringStart);
    ring = [];
    ringStart = 0;
    used += ringCost;
    ringCost = 0;
    for (const entry of entries) {
      if (typeof entry === 'string') queue('build', entry);
      else writeOwn(`Build log: ${describeBytes(entry.bytes)} of output left out here.`);
    }
  };

  /** Our own lines count towards the stored bytes but are never dropped. */
  const writeOwn = (line: string) => {
    used += lineCost(line);
    queue('build', line);
  };
  const note = (line: string) => {
    writeRing();
    writeOwn(line);
  };

  /** Pushes the ring's oldest line out, into the gap before it. */
  const dropOldest = () => {
    let at = ringStart;
    const front = ring[at];
    if (typeof front !== 'string') at++;
    const line = ring[at] as string;
    ringCost -= lineCost(line);
    const bytes = Buffer.byteLength(line) + 1;
    leftOutInAll += bytes;
    const gap = typeof front === 'string' ? { bytes: 0 } : front!;
    gap.bytes += bytes;
    ring[ringStart] = '';
    ring[at] = gap;
    ringStart = at;
    // Two gaps side by side are one.
    const next = ring[ringStart + 1];
    if (next !== undefined && typeof next !== 'string') {
      next.bytes += gap.bytes;
      ring[ringStart++] = '';
    }
    // Compacted now and then, so the ring's array does not grow with everything that passed.
    if (ringStart > 1024 && ringStart * 2 > ring.length) {
      ring = ring.slice(ringStart);
      ringStart = 0;
    }
  };

  const budget: OutputBudget = {
    room: () => (cut ? 0 : headRoom()),
    // What the ring can still take: a command's kept end then never pushes out lines before it.
    tailBytes: () => Math.max(0, limit - used - ringCost),
    leftOut(bytes) {
      if (bytes <= 0) return;
      leftOutInAll += bytes;
      const last = ring.length > ringStart ? ring.at(-1) : undefined;
      if (last !== undefined && typeof last !== 'string') last.bytes += bytes;
      else ring.push({ bytes });
    },
    ready: () => batcher.ready(),
    pace,
    // Said when it happens (a follower of the log sees why the build slows down), without
    // writing the ring: the end of the output comes in one piece when the command ends.
    slowed(bytesPerSecond) {
      if (!slowed)
        writeOwn(
          `Build log: this build prints more than ${describeBytes(bytesPerSecond)}/s past the limit: its output is read at that pace from now on, and the build waits on it.`,
        );
      slowed = true;
    },
    heldBack(ms) {
      heldBackMs += ms;
    },
  };

  return {
    push(type, line) {
      if (type !== 'build') return queue(type, line);
      const cost = lineCost(line);
      if (!cut && cost <= headRoom()) {
        used += cost;
        return queue('build', line);
      }
      if (!cut) {
        cut = true;
        writeOwn(
          `Build log cut at ${describeBytes(limit - tailBytes)} (SLIPWAY_BUILD_LOG_LIMIT is ${describeBytes(limit)}): later output is left out but for its last ${describeBytes(tailBytes)}, stored when the build ends; the build goes on.`,
        );
      }
      ring.push(line);
      ringCost += cost;
      while (ringCost > Math.max(0, limit - used)) dropOldest();
    },
    note,
    flush() {
      writeRing();
      return batcher.flush();
    },
    end() {
      writeRing();
      if (leftOutInAll > 0) {
        const waited =
          heldBackMs >= 1000
            ? ` The build waited up to ${describeElapsed(heldBackMs)} on its output, read at most ${describeBytes(slowed ? pace.bytesPerSecond : pace.burstBytesPerSecond)}/s past the limit.`
            : '';
        writeOwn(
          `Build log: ${describeBytes(leftOutInAll)} of output left out in all past the ${describeBytes(limit)} limit (SLIPWAY_BUILD_LOG_LIMIT).${waited}`,
        );
        leftOutInAll = 0;
        heldBackMs = 0;
      }
      return batcher.flush();
    },
    budget,
  };
}
