import { findFreePort } from '../../../../core/free-port.ts';
import { exitHandler } from './crash.ts';
import { spawnChild } from './spawn-child.ts';
import { killSpare, prepareSpareSoon, takeSpare } from './spare.ts';
import { forget, say, setState, usedPorts, type Supervised, type SupervisorState } from './state.ts';
import { terminate } from './terminate.ts';
import type { RuntimeSpec } from './types.ts';
import { waitUntilAccepting } from './wait-accepting.ts';

/** Starts a deployment's app, or gives the start under way or done. */
export function start(
  st: SupervisorState,
  deploymentId: string,
  spec: RuntimeSpec,
): Promise<{ port: number }> {
  const existing = st.running.get(deploymentId);
  if (existing) return existing.ready;
  const s: Supervised = {
    id: deploymentId,
    spec,
    port: 0,
    state: 'starting',
    child: null,
    exited: Promise.resolve(),
    listening: null,
    helper: null,
    startedAt: Date.now(),
    restarts: 0,
    delayMs: st.initialMs / 2,
    timer: null,
    stopping: false,
    ready: Promise.resolve({ port: 0 }),
  };
  st.running.set(deploymentId, s);
  s.ready = begin(st, s);
  // A caller that never awaits must not produce an unhandled rejection.
  s.ready.catch(() => undefined);
  return s.ready;
}

/** Runs s's app on a port (the spare's when there is one) until it accepts connections. */
async function begin(st: SupervisorState, s: Supervised): Promise<{ port: number }> {
  const { spec, id } = s;
  if (spec.command.length === 0) throw new Error('the runtime command is empty');
  const ready = takeSpare(st);
  s.port = ready ? ready.port : await findFreePort(st.opts.portRange, usedPorts(st));
  if (s.stopping) {
    if (ready) void killSpare(ready);
    throw new Error(`deployment ${id} was stopped while starting`);
  }
  say(st, s, `starting ${spec.command.join(' ')} on port ${s.port}`);
  spawnChild(st, s, ready, exitHandler(st));
  const up = await waitUntilAccepting(st, s, st.startTimeoutMs);
  prepareSpareSoon(st);
  if (up) {
    setState(st, s, 'running');
    say(st, s, `listening on port ${s.port}`);
    return { port: s.port };
  }
  const why = s.stopping
    ? 'it was stopped'
    : s.child
      ? `it did not accept connections on port ${s.port} within ${st.startTimeoutMs / 1000}s (it must listen on process.env.PORT)`
      : 'the process exited (see the runtime log)';
  forget(st, s);
  await terminate(st, s);
  throw new Error(`The app of deployment ${id} did not start: ${why}.`);
}

/** Stops a deployment's app (SIGTERM, then SIGKILL) and forgets it. */
export async function stop(st: SupervisorState, deploymentId: string): Promise<void> {
  const s = st.running.get(deploymentId);
  if (!s) return;
  forget(st, s);
  await terminate(st, s);
  say(st, s, 'stopped');
}

/** Stops every app and the spare sandbox, and settles once their groups are gone; no spare is made after this. */
export async function stopAll(st: SupervisorState): Promise<void> {
  st.closed = true;
  const sp = st.spare;
  st.spare = null;
  await Promise.all([...(sp ? [killSpare(sp)] : []), ...[...st.running.keys()].map((id) => stop(st, id))]);
}
