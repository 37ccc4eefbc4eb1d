import { emit, MAX_LINE } from './state.ts';
import type { StreamState } from './stream-state.ts';
import { keep, tailLines } from './tail.ts';

/** Emits whole lines (and pieces of runaway ones) until the buffer is used or the log asks to wait. */
export function drain(p: StreamState): void {
  const { budget } = p.run;
  for (;;) {
    if (budget && !p.skipping && budget.room() <= 0) return startSkipping(p);
    const line = nextLine(p);
    if (line === undefined) return;
    emit(p.run, p.name, line);
    const wait = budget?.ready();
    if (wait) return waitForLog(p, wait);
  }
}

/** The log is full: from now on the stream's output is kept raw (tail.ts), not made lines. */
function startSkipping(p: StreamState): void {
  // What was read but not split yet is the start of the kept end.
  p.skipping = true;
  // (A character split across that read is lost: it would be one in a flood.)
  const rest = p.buffer;
  p.buffer = '';
  if (rest) keep(p, Buffer.from(rest));
}

/** The buffer's next whole line, or the next MAX_LINE of a runaway one; undefined for neither. */
function nextLine(p: StreamState): string | undefined {
  const nl = p.buffer.indexOf('\n');
  if (nl !== -1) {
    const line = p.buffer.slice(0, nl).replace(/\r$/, '');
    p.buffer = p.buffer.slice(nl + 1);
    return line;
  }
  if (p.buffer.length > MAX_LINE) {
    // A secret straddling this cut would escape masking; acceptable for lines this long.
    const line = p.buffer.slice(0, MAX_LINE);
    p.buffer = p.buffer.slice(MAX_LINE);
    return line;
  }
  return undefined;
}

/** The stream is not read until the log is ready; then the lines go on. */
function waitForLog(p: StreamState, wait: Promise<void>): void {
  p.waiting = true;
  p.stream.pause();
  void wait.then(() => {
    p.waiting = false;
    drain(p);
    if (p.waiting) return;
    if (p.ended) finish(p);
    else p.stream.resume();
  });
}

/** The stream has ended: its last lines go on (or its kept end waits for emitTails), once. */
export function finish(p: StreamState): void {
  if (p.done) return;
  if (!p.skipping) {
    p.buffer += p.decoder.end();
    drain(p);
    if (p.waiting) return;
  }
  p.done = true;
  if (p.skipping) p.run.tails.set(p.name, (room) => tailLines(p, room));
  else if (p.buffer.length > 0) emit(p.run, p.name, p.buffer.replace(/\r$/, ''));
  p.buffer = '';
  p.finished();
}
