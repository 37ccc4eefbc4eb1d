import type { RollupSpan } from '../../platform/store/schema.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Rows of one span whose start is in `[from, to)` (ISO). */
export interface SpanRange {
  span: RollupSpan;
  from: string;
  to: string;
}

const floorTo = (t: number, unit: number) => Math.floor(t / unit) * unit;
const ceilTo = (t: number, unit: number) => Math.ceil(t / unit) * unit;

/**
 * The fewest rollup rows that add up to the minutes starting within `[since, until]`: whole days
 * in the middle, whole hours around them, single minutes at the edges. A 30-day period reads at
 * most about 30 day rows, 46 hour rows and 59 minute rows, however much traffic it had.
 *
 * Minute rows are kept only `minuteRetentionMs`; a longer period starts at the beginning of the
 * hour that holds `since` (up to 59 minutes more than the period), so that it never depends on
 * minutes already deleted. A period within the retention is exact to the minute.
 */
export function rollupRanges(sinceMs: number, untilMs: number, minuteRetentionMs: number): SpanRange[] {
  let start = ceilTo(sinceMs, MINUTE);
  const end = floorTo(untilMs, MINUTE) + MINUTE;
  if (untilMs - sinceMs > minuteRetentionMs) start = floorTo(start, HOUR);
  const out: SpanRange[] = [];
  const push = (span: RollupSpan, from: number, to: number) => {
    if (from < to) out.push({ span, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  };
  const h1 = ceilTo(start, HOUR);
  const h2 = floorTo(end, HOUR);
  if (h1 >= h2) {
    push('minute', start, end);
    return out;
  }
  push('minute', start, h1);
  const d1 = ceilTo(h1, DAY);
  const d2 = floorTo(h2, DAY);
  if (d1 >= d2) {
    push('hour', h1, h2);
  } else {
    push('hour', h1, d1);
    push('day', d1, d2);
    push('hour', d2, h2);
  }
  push('minute', h2, end);
  return out;
}
