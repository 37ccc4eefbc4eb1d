import { start } from './run.ts';
import type { ClaimLoopState, LaneState } from './state.ts';

/** One lane's loop: claim up to its room, start what was claimed, sleep until woken or polled. */
export async function loop<T extends { id: string }>(st: ClaimLoopState<T>, s: LaneState<T>): Promise<void> {
  const { lane } = s;
  while (st.running) {
    s.wake.reset();
    const round = ++s.round;
    const room = lane.room(s.runs.size);
    const asked = Math.min(room, lane.batch ?? room);
    let claimed: T[] = [];
    if (asked > 0) {
      try {
        claimed = await lane.claim(asked);
      } catch (err) {
        st.deps.log.warn({ err, kind: lane.name }, 'claiming jobs failed; retrying');
      }
    }
    if (!st.running) {
      await Promise.all(claimed.map((job) => lane.release(job)));
      break;
    }
    for (const job of claimed) start(st, s, job);
    // A full claim means more may be due: claim again while there is room.
    if (asked > 0 && claimed.length === asked) continue;
    if (claimed.length === 0 && s.runs.size === 0) {
      for (const w of s.idlers.filter((w) => w.after < round)) w.resolve();
      s.idlers = s.idlers.filter((w) => w.after >= round);
    }
    await s.wake.sleep(st.opts.pollMs);
  }
}

/** ClaimLoop.idle. */
export async function idle<T extends { id: string }>(st: ClaimLoopState<T>): Promise<void> {
  if (!st.running) return;
  // Only a claim round that starts after this call proves nothing committed before it is due.
  const idle = st.all.map((s) => new Promise<void>((resolve) => s.idlers.push({ after: s.round, resolve })));
  for (const s of st.all) s.wake.wake();
  await Promise.all(idle);
}
