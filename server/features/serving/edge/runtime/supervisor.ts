import { openConnection, readyHelper } from './connect.ts';
import { start, stop, stopAll } from './lifecycle.ts';
import type { SupervisorState } from './state.ts';
import type { RuntimeSupervisor } from './types.ts';

/** The supervisor's interface over its state (createRuntimeSupervisor makes both). */
export function supervisorOf(st: SupervisorState): RuntimeSupervisor {
  return {
    start: (deploymentId, spec) => start(st, deploymentId, spec),
    stop: (deploymentId) => stop(st, deploymentId),
    stopAll: () => stopAll(st),
    portOf(deploymentId) {
      const s = st.running.get(deploymentId);
      return s && s.port > 0 ? s.port : undefined;
    },
    canConnect: (port) => readyHelper(st, port) !== null,
    openConnection: (port, done) => openConnection(st, port, done),
    sparePort() {
      const spare = st.spare;
      return spare && spare.child.exitCode === null ? spare.port : undefined;
    },
    counts() {
      const counts = { starting: 0, running: 0, restarting: 0 };
      for (const s of st.running.values()) counts[s.state]++;
      return counts;
    },
    status(deploymentId) {
      const s = st.running.get(deploymentId);
      return s ? { state: s.state, port: s.port, pid: s.child?.pid, restarts: s.restarts } : undefined;
    },
  };
}
