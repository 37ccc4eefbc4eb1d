import { findFreePort } from '../../../../core/free-port.ts';
import { spawnChild } from './spawn-child.ts';
import { movePort, say, setState, usedPorts, type Supervised, type SupervisorState } from './state.ts';
import { waitUntilAccepting } from './wait-accepting.ts';

/** s's process is gone: one that was up is restarted after its backoff delay. */
export function onExit(
  st: SupervisorState,
  s: Supervised,
  code: number | null,
  signal: NodeJS.Signals | null,
): void {
  s.child = null;
  if (s.stopping || st.running.get(s.id) !== s) return;
  const how = signal ? `was killed by ${signal}` : `exited with code ${code ?? 'unknown'}`;
  // While starting, start() reports the failure; only a process that was up is restarted.
  if (s.state === 'starting') {
    say(st, s, `process ${how} before it listened on port ${s.port}`);
    return;
  }
  s.delayMs = Date.now() - s.startedAt >= st.resetAfterMs ? st.initialMs : Math.min(s.delayMs * 2, st.maxMs);
  setState(st, s, 'restarting');
  say(st, s, `process ${how}; restarting in ${Math.round(s.delayMs / 100) / 10}s`);
  s.timer = setTimeout(() => void restart(st, s), s.delayMs);
  s.timer.unref();
}

/** The exit handler spawnChild gets: this file's onExit, for st. */
export function exitHandler(st: SupervisorState) {
  return (s: Supervised, code: number | null, signal: NodeJS.Signals | null) => onExit(st, s, code, signal);
}

async function restart(st: SupervisorState, s: Supervised): Promise<void> {
  s.timer = null;
  if (s.stopping) return;
  s.restarts++;
  // Keep the port when it is still free; the proxy reads it live, so a new one also works.
  const others = usedPorts(st);
  others.delete(s.port);
  const port = await findFreePort([s.port, s.port]).catch(() => findFreePort(st.opts.portRange, others));
  movePort(st, s, port);
  if (s.stopping) return;
  say(st, s, `restarting (restart ${s.restarts}) on port ${s.port}`);
  spawnChild(st, s, null, exitHandler(st));
  void waitUntilAccepting(st, s, st.startTimeoutMs).then((ok) => {
    if (ok && s.state === 'restarting' && s.child) setState(st, s, 'running');
  });
}
