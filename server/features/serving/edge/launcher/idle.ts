import { rm } from 'node:fs/promises';
import { every, type Every } from '../../../../core/every.ts';
import { diskUsage } from '../../../../platform/sandbox/disk-watch.ts';
import { forget, type LauncherState } from './state.ts';
import { stateOf } from './writable.ts';

/**
 * Stops apps with no request for `idleStopMs`, and checks the bound of their writable folders, on
 * a timer; null when apps are never stopped as idle.
 */
export function startIdleTimer(s: LauncherState): Every | null {
  if (s.idleStopMs <= 0) return null;
  return every(Math.min(s.idleStopMs, 60_000), () => idleTick(s), { onError: () => undefined });
}

// The idle check is not held up by a slow bound check (du of big folders): that one runs aside,
// and its failures wait for the next tick.
function idleTick(s: LauncherState): void {
  const t = s.now();
  for (const [id, at] of s.lastUsed) {
    if (t - at < s.idleStopMs) continue;
    // A long answer (a stream, a slow report) or an open WebSocket: idle from its end on.
    const port = s.supervisor.portOf(id);
    if (port !== undefined && s.opts.inUse?.(port)) {
      s.lastUsed.set(id, t);
      continue;
    }
    forget(s, id);
    void s.supervisor.stop(id);
  }
  void boundState(s).catch(() => undefined);
}

/**
 * A running app whose writable folders grew past the bound is stopped and its folders go back
 * to what the build left; its next request starts it again.
 */
async function boundState(s: LauncherState): Promise<void> {
  for (const id of [...s.lastUsed.keys()]) {
    const state = stateOf(s, id);
    if (!state) return;
    const bytes = await diskUsage(state);
    if (bytes === null || bytes <= s.stateMaxBytes) continue;
    forget(s, id);
    await s.supervisor.stop(id);
    await rm(state, { recursive: true, force: true });
    s.opts.onStateCleared?.(id, bytes);
  }
}
