import type { Deps } from '../../../platform/deps/deps.ts';
import { writeRollupDeltas, type RollupDelta } from '../record-requests.ts';

export interface RequestRecorderOptions {
  /** How often the counts are written (ms); default 1000. */
  intervalMs?: number;
  /** Writes a batch of deltas; default: into the rollups of `deps.db`, in one transaction. */
  write?: (deltas: RollupDelta[]) => Promise<void>;
}

export type RecorderDeps = Pick<Deps, 'db' | 'metrics' | 'clock' | 'log'>;

/** What one recorder keeps (createRequestRecorder makes it once), passed to its functions. */
export interface RecorderState {
  deps: RecorderDeps;
  write: (deltas: RollupDelta[]) => Promise<void>;
  /** Counters by project, then by minute (ms since the epoch). */
  pending: Map<string, Map<number, RollupDelta>>;
  /** How many counters `pending` holds. */
  size: number;
  /** Requests whose counters were dropped since the last write. */
  dropped: number;
  /** The last write, which the next one follows. */
  flushing: Promise<void>;
}

export function createRecorderState(deps: RecorderDeps, opts: RequestRecorderOptions): RecorderState {
  return {
    deps,
    write: opts.write ?? ((deltas) => writeRollupDeltas(deps, deltas)),
    pending: new Map(),
    size: 0,
    dropped: 0,
    flushing: Promise.resolve(),
  };
}
