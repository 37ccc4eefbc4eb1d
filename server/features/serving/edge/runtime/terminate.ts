import type { Supervised, SupervisorState } from './state.ts';

/** Signals the process group of `pid`; the lone process when the group cannot be signalled. */
function sendSignal(pid: number, sig: NodeJS.Signals, groupOnly = false): void {
  try {
    process.kill(-pid, sig);
  } catch {
    if (groupOnly) return;
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  }
}

/** Ends s's process (SIGTERM, then SIGKILL after stopTimeoutMs) and no restart follows. */
export async function terminate(st: SupervisorState, s: Supervised): Promise<void> {
  s.stopping = true;
  if (s.timer) clearTimeout(s.timer);
  s.timer = null;
  const pid = s.child?.pid;
  if (pid === undefined) return;
  const exited = s.exited;
  // In the sandbox, the app gets the SIGTERM (its helpers would end it without a chance to
  // finish); SIGKILL to the group ends the whole sandbox.
  if (st.sandbox.mode === 'bubblewrap') st.sandbox.signalTenant(pid, 'SIGTERM');
  else sendSignal(pid, 'SIGTERM');
  const killer = setTimeout(() => sendSignal(pid, 'SIGKILL'), st.stopTimeoutMs);
  await exited;
  clearTimeout(killer);
  // What the process spawned (npm's node, a shell's command) may outlive it: end its group too.
  // Only the group: the lone pid may already belong to an unrelated process.
  sendSignal(pid, 'SIGKILL', true);
}
