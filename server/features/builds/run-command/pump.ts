import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { drain, finish } from './lines.ts';
import { pace, resumeFromPace } from './pace.ts';
import type { RunState } from './state.ts';
import type { StreamState } from './stream-state.ts';
import { keep } from './tail.ts';
import type { OutputStream } from './types.ts';

/** Resolves once the stream has ended and all it carried went to `onLine` or to `tails`. */
export function pump(st: RunState, stream: Readable, name: OutputStream): Promise<void> {
  let finished!: () => void;
  const whenDone = new Promise<void>((resolve) => (finished = resolve));
  const p: StreamState = {
    run: st,
    stream,
    name,
    decoder: new StringDecoder('utf8'),
    buffer: '',
    ended: false,
    waiting: false,
    done: false,
    finished,
    skipping: false,
    kept: [],
    keptBytes: 0,
    cutFront: false,
    paceTimer: undefined,
  };
  st.hurry.push(() => resumeFromPace(p));
  stream.on('data', (chunk: Buffer) => onData(p, chunk));
  // 'end' may come while the stream is held for the pace (its last chunk was read then): all
  // it carried is here, so its end is kept at once. 'close' without 'end': it was destroyed.
  const onEnd = () => streamEnded(p);
  stream.on('end', onEnd);
  stream.on('close', onEnd);
  return whenDone;
}

function onData(p: StreamState, chunk: Buffer): void {
  if (p.skipping) {
    keep(p, chunk);
    return pace(p, chunk.length);
  }
  p.buffer += p.decoder.write(chunk);
  if (!p.waiting) drain(p);
}

function streamEnded(p: StreamState): void {
  p.ended = true;
  if (p.paceTimer) resumeFromPace(p);
  else if (!p.waiting) finish(p);
}
