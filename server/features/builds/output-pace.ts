/**
 * How fast a command's output past the log's head is read (run-command.ts). The pipe is not read
 * in between, so a command printing faster blocks on its own writes: the build that floods its
 * log is the one slowed, not the service reading it nor the other builds on the machine.
 */
export interface OutputPace {
  /** Bytes past the head read at up to `burstBytesPerSecond` (a chatty build's last few MiB)... */
  burstBytes: number;
  burstBytesPerSecond: number;
  /** ...and past those, at most this fast, until the command ends. */
  bytesPerSecond: number;
}

const MiB = 1024 * 1024;

/**
 * The defaults: 16 MiB at up to 16 MiB/s, then 2 MiB/s. A flood of `yes` read at 16 MiB/s took the
 * reading worker and the flooding build a core between them (a healthy neighbour's build 1.69 x
 * as slow); at 2 MiB/s the reads cost about 32 wake-ups a second, and the build waits on its pipe.
 */
export const DEFAULT_OUTPUT_PACE: Readonly<OutputPace> = {
  burstBytes: 16 * MiB,
  burstBytesPerSecond: 16 * MiB,
  bytesPerSecond: 2 * MiB,
};

/** Rates are kept per tick of this length: at 2 MiB/s, 128 KiB (two reads of a full pipe) a tick. */
const TICK_MS = 64;

export interface Pacer {
  /**
   * Counts `bytes` read past the head; returns how long to stop reading before the next read
   * (0: read on). Once `end()` was called, always 0: what is left in the pipe is read at once.
   */
  take(bytes: number): number;
  /** Whether reading was ever held to `bytesPerSecond` (past the burst). */
  readonly slowed: boolean;
  /** Stops pacing: the command has ended, and what its pipes still hold is bounded by their size. */
  end(): void;
}

/** One command's pace, shared by its stdout and stderr so that flooding both does not double it. */
export function createPacer(pace: OutputPace, now: () => number = Date.now): Pacer {
  let read = 0;
  let tickStart = -Infinity;
  let tickBytes = 0;
  let ended = false;
  let slowed = false;
  return {
    take(bytes) {
      read += bytes;
      if (ended) return 0;
      const t = now();
      if (t - tickStart >= TICK_MS) {
        tickStart = t;
        tickBytes = 0;
      }
      tickBytes += bytes;
      const rate = read <= pace.burstBytes ? pace.burstBytesPerSecond : pace.bytesPerSecond;
      if (tickBytes < (rate * TICK_MS) / 1000) return 0;
      if (read > pace.burstBytes) slowed = true;
      // Over the tick's share: wait out the tick, and longer when one read took several ticks' worth.
      const ticks = Math.ceil(tickBytes / ((rate * TICK_MS) / 1000));
      return Math.max(1, tickStart + ticks * TICK_MS - t);
    },
    get slowed() {
      return slowed;
    },
    end() {
      ended = true;
    },
  };
}
