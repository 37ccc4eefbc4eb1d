/** A line counts at least this towards a log limit: storing an empty line is not free. */
export const MIN_LINE_COST = 32;

/** What a log line counts towards a log limit: its bytes and its newline, and at least 32. */
export function lineCost(line: string): number {
  return Math.max(Buffer.byteLength(line) + 1, MIN_LINE_COST);
}
