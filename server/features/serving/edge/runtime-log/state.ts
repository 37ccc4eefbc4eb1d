import type { Kysely } from 'kysely';
import type { Clock } from '../../../../core/clock.ts';
import { describeBytes } from '../../../../core/format.ts';
import type { Database } from '../../../../platform/store/schema.ts';
import type { RuntimeStream } from '../runtime.ts';

export interface RuntimeLogSink {
  /** Queues one line of a deployment's `runtime` log; the shape RuntimeSupervisorOptions.log takes. */
  log(deploymentId: string, line: string, stream: RuntimeStream): void;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

export interface RuntimeLogDeps {
  db: Kysely<Database>;
  clock: Clock;
}

export interface RuntimeLogOptions {
  flushMs?: number;
  onError?: (err: unknown) => void;
  limitBytes?: number;
}

/** The default of SLIPWAY_RUNTIME_LOG_LIMIT. */
const DEFAULT_LIMIT_BYTES = 5 * 1024 * 1024;

/** What one deployment stored in its current hour. */
export interface Budget {
  since: number;
  bytes: number;
  cut: boolean;
  droppedLines: number;
  droppedBytes: number;
}

export interface LogRow {
  deployment_id: string;
  type: 'runtime';
  at: string;
  line: string;
}

/** What one sink keeps (createRuntimeLogSink makes it once), passed to its functions. */
export interface SinkState {
  deps: RuntimeLogDeps;
  opts: RuntimeLogOptions;
  /** Lines waiting for the next write. */
  queue: LogRow[];
  /** Lines dropped while the queue was full, by deployment. */
  dropped: Map<string, number>;
  /** The last write, which the next one follows. */
  flushing: Promise<void>;
  /** Most bytes of output a deployment stores an hour, and the same in words. */
  limitBytes: number;
  limit: string;
  /** Each deployment's current hour. */
  budgets: Map<string, Budget>;
}

export function createSinkState(deps: RuntimeLogDeps, opts: RuntimeLogOptions): SinkState {
  const limitBytes = opts.limitBytes ?? DEFAULT_LIMIT_BYTES;
  return {
    deps,
    opts,
    queue: [],
    dropped: new Map(),
    flushing: Promise.resolve(),
    limitBytes,
    limit: describeBytes(limitBytes),
    budgets: new Map(),
  };
}
