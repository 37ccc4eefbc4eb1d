import type { LogType } from '../../../../../api/schemas/deployments.ts';
import type { OutputBudget } from '../../run-command.ts';
import type { OutputPace } from '../../output-pace.ts';
import type { LogBatcherOptions } from '../log-batcher.ts';

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
