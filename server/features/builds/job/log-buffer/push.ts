import type { LogType } from '../../../../../api/schemas/deployments.ts';
import { lineCost } from '../../log-cost.ts';
import { describeBytes, describeElapsed } from '../../../../core/format.ts';
import { headRoom, queue, writeOwn, writeRing, type LogBufferState } from './state.ts';

/**
 * Queues a line: `build` lines go to the head while it has room, and to the ring past it (said
 * once, when the log is cut); other types are always queued.
 */
export function push(s: LogBufferState, type: LogType, line: string): void {
  if (type !== 'build') return queue(s, type, line);
  const cost = lineCost(line);
  if (!s.cut && cost <= headRoom(s)) {
    s.used += cost;
    return queue(s, 'build', line);
  }
  if (!s.cut) {
    s.cut = true;
    writeOwn(
      s,
      `Build log cut at ${describeBytes(s.limit - s.tailBytes)} (SLIPWAY_BUILD_LOG_LIMIT is ${describeBytes(s.limit)}): later output is left out but for its last ${describeBytes(s.tailBytes)}, stored when the build ends; the build goes on.`,
    );
  }
  s.ring.push(line);
  s.ringCost += cost;
  while (s.ringCost > Math.max(0, s.limit - s.used)) dropOldest(s);
}

/** Pushes the ring's oldest line out, into the gap before it. */
function dropOldest(s: LogBufferState): void {
  let at = s.ringStart;
  const front = s.ring[at];
  if (typeof front !== 'string') at++;
  const line = s.ring[at] as string;
  s.ringCost -= lineCost(line);
  const bytes = Buffer.byteLength(line) + 1;
  s.leftOutInAll += bytes;
  const gap = typeof front === 'string' ? { bytes: 0 } : front!;
  gap.bytes += bytes;
  s.ring[s.ringStart] = '';
  s.ring[at] = gap;
  s.ringStart = at;
  // Two gaps side by side are one.
  const next = s.ring[s.ringStart + 1];
  if (next !== undefined && typeof next !== 'string') {
    next.bytes += gap.bytes;
    s.ring[s.ringStart++] = '';
  }
  // Compacted now and then, so the ring's array does not grow with everything that passed.
  if (s.ringStart > 1024 && s.ringStart * 2 > s.ring.length) {
    s.ring = s.ring.slice(s.ringStart);
    s.ringStart = 0;
  }
}

/** Flushes, with one line saying how much build output was left out if any was. */
export function end(s: LogBufferState): Promise<void> {
  writeRing(s);
  if (s.leftOutInAll > 0) {
    const { pace } = s;
    const waited =
      s.heldBackMs >= 1000
        ? ` The build waited up to ${describeElapsed(s.heldBackMs)} on its output, read at most ${describeBytes(s.slowed ? pace.bytesPerSecond : pace.burstBytesPerSecond)}/s past the limit.`
        : '';
    writeOwn(
      s,
      `Build log: ${describeBytes(s.leftOutInAll)} of output left out in all past the ${describeBytes(s.limit)} limit (SLIPWAY_BUILD_LOG_LIMIT).${waited}`,
    );
    s.leftOutInAll = 0;
    s.heldBackMs = 0;
  }
  return s.batcher.flush();
}
