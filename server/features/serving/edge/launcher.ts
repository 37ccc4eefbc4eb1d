import { LRUCache } from 'lru-cache';
import { startIdleTimer } from './launcher/idle.ts';
import { ensure, stopProject } from './launcher/start.ts';
import { touch, type LauncherState } from './launcher/state.ts';
import type { RuntimeLauncher, RuntimeLauncherOptions } from './launcher/types.ts';
import { createMaterializer } from './materialize.ts';

// The launcher's pieces, each in a file of its own under launcher/: starting an app once for
// concurrent requests and stopping a project's (start.ts), its writable folders (writable.ts),
// the idle and disk-bound timer (idle.ts), the options and the interface (types.ts). What they
// share is one LauncherState, passed along.

export type { RuntimeLauncher, RuntimeLauncherOptions } from './launcher/types.ts';

/**
 * Starts `node` deployments on their first request: writes the artifact out, then runs its start
 * command under the supervisor with the project's variables. Every edge process can therefore
 * serve any deployment, also after a restart, and apps nobody visits stop using memory.
 */
export function createRuntimeLauncher(opts: RuntimeLauncherOptions): RuntimeLauncher {
  const now = opts.now ?? Date.now;
  const retryAfterMs = opts.retryAfterMs ?? 10_000;
  const s: LauncherState = {
    opts,
    supervisor: opts.supervisor,
    now,
    idleStopMs: opts.idleStopMs ?? 30 * 60_000,
    retryAfterMs,
    stateMaxBytes: opts.stateMaxBytes ?? 1024 ** 3,
    materializer: createMaterializer(opts.artifacts, opts.runtimesDir),
    lastUsed: new Map(),
    failures: new LRUCache<string, Error>({
      max: 10_000,
      ttl: Math.max(1, retryAfterMs),
      ttlResolution: 0,
      perf: { now },
    }),
    starting: new Map(),
    apps: new Map(),
  };
  const timer = startIdleTimer(s);

  return {
    ensure: (target) => ensure(s, target),
    touch: (deploymentId) => touch(s, deploymentId),
    runningPort(deploymentId) {
      if (s.starting.has(deploymentId)) return undefined;
      const port = s.supervisor.portOf(deploymentId);
      if (port !== undefined) touch(s, deploymentId);
      return port;
    },
    projects: () => [...new Set([...s.apps.values()].map((a) => a.projectId))],
    stopProject: (projectId) => stopProject(s, projectId),
    close() {
      void timer?.stop();
    },
  };
}
