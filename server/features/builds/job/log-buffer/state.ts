import type { LogType } from '../../../../../api/schemas/deployments.ts';
import { lineCost } from '../../log-cost.ts';
import type { OutputPace } from '../../output-pace.ts';
import { describeBytes } from '../../../../core/format.ts';
import type { LogBatcher } from '../log-batcher.ts';

/** Where build output was left out, and how much. */
export interface Gap {
  bytes: number;
}

/**
 * What one deployment's log buffer keeps (createLogBuffer makes it once), passed to the functions
 * that push, cut, write and end rather than closed over.
 */
export interface LogBufferState {
  /** Bytes of `build` lines stored per deployment (LogBufferOptions.limitBytes). */
  limit: number;
  /** Bytes of the end of the build output kept past the limit. */
  tailBytes: number;
  batcher: LogBatcher;
  pace: OutputPace;
  /** What is stored or queued of the build log, in `lineCost`s. */
  used: number;
  /** Whether the head is full: `build` lines go to the ring from then on. */
  cut: boolean;
  /**
   * Past the head: the latest lines, at most `limit - used` of them by cost, with a gap where
   * output was left out (dropped at the pipe, or pushed out of the front of the ring).
   */
  ring: (string | Gap)[];
  ringStart: number;
  ringCost: number;
  /** Bytes of build output left out in all. */
  leftOutInAll: number;
  /** How long the commands' pipes were left unread to keep the pace, in all. */
  heldBackMs: number;
  /** Whether a command's output was read at `pace.bytesPerSecond` (past the burst). */
  slowed: boolean;
}

/** What the head can still take before lines go to the ring. */
export const headRoom = (s: LogBufferState) => s.limit - s.tailBytes - s.used;

export const queue = (s: LogBufferState, type: LogType, line: string) =>
  s.batcher.add({ type, line }, Buffer.byteLength(line) + 1);

/** Our own lines count towards the stored bytes but are never dropped. */
export function writeOwn(s: LogBufferState, line: string): void {
  s.used += lineCost(line);
  queue(s, 'build', line);
}

/** Writes the ring's lines, with a line saying how much was left out at each gap. */
export function writeRing(s: LogBufferState): void {
  const entries = s.ring.slice(s.ringStart);
  s.ring = [];
  s.ringStart = 0;
  s.used += s.ringCost;
  s.ringCost = 0;
  for (const entry of entries) {
    if (typeof entry === 'string') queue(s, 'build', entry);
    else writeOwn(s, `Build log: ${describeBytes(entry.bytes)} of output left out here.`);
  }
}
