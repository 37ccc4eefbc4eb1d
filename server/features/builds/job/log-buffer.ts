import { DEFAULT_OUTPUT_PACE } from '../output-pace.ts';
import { appendLog } from '../../deployments/index.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { createLogBatcher, type LogEntry } from './log-batcher.ts';
import { createBudget } from './log-buffer/budget.ts';
import { end, push } from './log-buffer/push.ts';
import { writeOwn, writeRing, type LogBufferState } from './log-buffer/state.ts';
import { storedBuildLogBytes } from './log-buffer/stored-bytes.ts';
import type { LogBuffer, LogBufferOptions } from './log-buffer/types.ts';

// The buffer's pieces, each in a file of its own under log-buffer/: what it keeps and writes
// (state.ts), a line pushed into the head or the ring and the last words (push.ts), the budget
// the builder's pipes read (budget.ts), what earlier attempts stored (stored-bytes.ts), the
// options and the interface (types.ts). What they share is one LogBufferState, passed along.

export type { LogBuffer, LogBufferOptions } from './log-buffer/types.ts';

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
  const used = await storedBuildLogBytes(deps, deploymentId);
  const s: LogBufferState = {
    limit,
    tailBytes: Math.min(Math.floor(limit / 4), MAX_TAIL),
    batcher: createLogBatcher({
      ...opts.batch,
      write: async (batch: readonly LogEntry[]) => {
        for (const type of ['build', 'runtime', 'error'] as const) {
          const lines = batch.filter((b) => b.type === type).map((b) => b.line);
          if (lines.length) await appendLog(deps, deploymentId, type, lines);
        }
      },
      onError: (err) => deps.log.warn({ err, deploymentId }, 'could not write build log lines'),
    }),
    pace: opts.pace ?? DEFAULT_OUTPUT_PACE,
    used,
    cut: false,
    ring: [],
    ringStart: 0,
    ringCost: 0,
    leftOutInAll: 0,
    heldBackMs: 0,
    slowed: false,
  };

  return {
    push: (type, line) => push(s, type, line),
    note(line) {
      writeRing(s);
      writeOwn(s, line);
    },
    flush() {
      writeRing(s);
      return s.batcher.flush();
    },
    end: () => end(s),
    budget: createBudget(s),
  };
}
