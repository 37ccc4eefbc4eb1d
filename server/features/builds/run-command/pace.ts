import { DEFAULT_OUTPUT_PACE } from '../output-pace.ts';
import { finish } from './lines.ts';
import { hold, unhold } from './state.ts';
import type { StreamState } from './stream-state.ts';

/** Reads on after a pause for the pace (or at once: the command has ended). */
export function resumeFromPace(p: StreamState): void {
  if (!p.paceTimer) return;
  clearTimeout(p.paceTimer);
  p.paceTimer = undefined;
  unhold(p.run);
  if (p.ended) finish(p);
  else p.stream.resume();
}

/** Counts bytes read past the budget; leaves the stream unread as long as the pace asks. */
export function pace(p: StreamState, bytes: number): void {
  const st = p.run;
  const ms = st.pacer.take(bytes);
  if (st.pacer.slowed && !st.toldSlowed) {
    st.toldSlowed = true;
    st.budget!.slowed?.((st.budget!.pace ?? DEFAULT_OUTPUT_PACE).bytesPerSecond);
  }
  if (ms <= 0) return;
  p.stream.pause();
  hold(st);
  p.paceTimer = setTimeout(() => resumeFromPace(p), ms);
}
