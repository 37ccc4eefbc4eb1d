import { lineCost } from '../log-cost.ts';
import { emit, MAX_LINE, type RunState } from './state.ts';
import type { StreamState } from './stream-state.ts';
import type { OutputStream } from './types.ts';

/** Keeps a raw chunk past the budget, dropping the oldest kept ones beyond what the log can take. */
export function keep(p: StreamState, chunk: Buffer): void {
  const budget = p.run.budget!;
  p.kept.push(chunk);
  p.keptBytes += chunk.length;
  const max = budget.tailBytes();
  while (p.kept.length > 1 && p.keptBytes - p.kept[0]!.length >= max) {
    budget.leftOut(p.kept[0]!.length);
    p.cutFront = true;
    p.keptBytes -= p.kept.shift()!.length;
  }
}

/**
 * The kept end of a stream that went past the budget: its last whole lines within `room`
 * (in `lineCost`s), and what they cost; the rest is left out.
 */
export function tailLines(p: StreamState, room: number): { lines: string[]; cost: number } {
  const raw = Buffer.concat(p.kept);
  p.kept = [];
  const lines = raw.toString('utf8').split('\n');
  // A trailing newline ends the last line rather than starting an empty one.
  if (lines.at(-1) === '') lines.pop();
  // The first line may have lost its start (or be the middle of a runaway line): unless the
  // whole end was kept, it is left out with everything before it.
  const from = p.cutFront ? 1 : 0;
  let first = lines.length;
  let cost = 0;
  while (first > from && cost + lineCost(lines[first - 1]!) <= room) cost += lineCost(lines[--first]!);
  const shown = lines.slice(first);
  p.run.budget!.leftOut(raw.length - shown.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
  return { lines: shown, cost };
}

/** The ends of the streams that went past the budget, in the room the log has left: half each when both did. */
export function emitTails(st: RunState): void {
  const out = st.tails.get('stdout');
  const err = st.tails.get('stderr');
  if (!out && !err) return;
  const room = st.budget!.tailBytes();
  const errLines = err?.(out ? Math.floor(room / 2) : room) ?? { lines: [], cost: 0 };
  const outLines = out?.(room - errLines.cost) ?? { lines: [], cost: 0 };
  show(st, 'stdout', outLines.lines);
  show(st, 'stderr', errLines.lines);
}

function show(st: RunState, stream: OutputStream, lines: string[]): void {
  for (const line of lines) {
    if (line.length <= MAX_LINE) emit(st, stream, line.replace(/\r$/, ''));
    else for (let i = 0; i < line.length; i += MAX_LINE) emit(st, stream, line.slice(i, i + MAX_LINE));
  }
}
