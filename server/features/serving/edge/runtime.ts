import { createSupervisorState } from './runtime/state.ts';
import { supervisorOf } from './runtime/supervisor.ts';
import type { RuntimeSupervisor, RuntimeSupervisorOptions } from './runtime/types.ts';

export type {
  RuntimeSpec,
  RuntimeStatus,
  RuntimeStream,
  RuntimeSupervisor,
  RuntimeSupervisorOptions,
} from './runtime/types.ts';

/**
 * Runs deployments' server processes on 127.0.0.1 and keeps them up. Its parts, in runtime/:
 * state.ts (what they share, with the index of running apps by port), lifecycle.ts (start, stop),
 * spawn-child.ts, wait-accepting.ts, crash.ts (restarts with backoff), terminate.ts, spare.ts (the
 * sandbox made ready ahead), connect.ts (connections from inside an app's sandbox).
 */
export function createRuntimeSupervisor(opts: RuntimeSupervisorOptions): RuntimeSupervisor {
  return supervisorOf(createSupervisorState(opts));
}
