import type { OutputBudget } from '../../run-command.ts';
import { describeBytes } from '../../../../core/format.ts';
import { headRoom, writeOwn, type LogBufferState } from './state.ts';

/** What the builder's commands may send: past the head, their output is dropped unread at the pipe. */
export function createBudget(s: LogBufferState): OutputBudget {
  return {
    room: () => (s.cut ? 0 : headRoom(s)),
    // What the ring can still take: a command's kept end then never pushes out lines before it.
    tailBytes: () => Math.max(0, s.limit - s.used - s.ringCost),
    leftOut: (bytes) => leftOut(s, bytes),
    ready: () => s.batcher.ready(),
    pace: s.pace,
    // Said when it happens (a follower of the log sees why the build slows down), without
    // writing the ring: the end of the output comes in one piece when the command ends.
    slowed(bytesPerSecond) {
      if (!s.slowed)
        writeOwn(
          s,
          `Build log: this build prints more than ${describeBytes(bytesPerSecond)}/s past the limit: its output is read at that pace from now on, and the build waits on it.`,
        );
      s.slowed = true;
    },
    heldBack(ms) {
      s.heldBackMs += ms;
    },
  };
}

/** Output a command's pipe left out: into the gap at the ring's end, or a new one. */
function leftOut(s: LogBufferState, bytes: number): void {
  if (bytes <= 0) return;
  s.leftOutInAll += bytes;
  const last = s.ring.length > s.ringStart ? s.ring.at(-1) : undefined;
  if (last !== undefined && typeof last !== 'string') last.bytes += bytes;
  else s.ring.push({ bytes });
}
