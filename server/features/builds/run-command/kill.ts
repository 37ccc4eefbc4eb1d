import type { RunState } from './state.ts';

/** Signals the command's whole process group (it leads one: killing -pid ends all it started). */
export function killGroup(st: RunState, sig: NodeJS.Signals): void {
  if (st.child.pid === undefined) return;
  try {
    process.kill(-st.child.pid, sig);
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

/** SIGTERM to the group now, SIGKILL after the grace (`killGraceMs`, default 2 s). */
export function terminate(st: RunState): void {
  killGroup(st, 'SIGTERM');
  st.killTimer ??= setTimeout(() => killGroup(st, 'SIGKILL'), st.opts.killGraceMs ?? 2000);
}

/** The timeout and the abort signal: either ends the command. */
export function startLimits(st: RunState): void {
  st.timeout = setTimeout(() => {
    st.timedOut = true;
    terminate(st);
  }, st.opts.timeoutMs);
  st.onAbort = () => {
    st.aborted = true;
    terminate(st);
  };
  st.opts.signal?.addEventListener('abort', st.onAbort, { once: true });
}

/** Stops every timer of the run and the abort listener. */
export function cleanup(st: RunState): void {
  clearTimeout(st.timeout);
  clearTimeout(st.killTimer);
  clearTimeout(st.drainTimer);
  st.opts.signal?.removeEventListener('abort', st.onAbort);
}
