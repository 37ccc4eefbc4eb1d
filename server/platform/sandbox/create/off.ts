import { isAccepting } from '../../../core/free-port.ts';
import type { WorkspaceDisks } from '../workspace-disk.ts';
import type { Sandbox } from './types.ts';

/** SLIPWAY_SANDBOX=off: tenant code runs as the service, with no isolation. */
export function offSandbox(limits: Sandbox['limits'], disk: WorkspaceDisks): Sandbox {
  const sandbox: Sandbox = {
    mode: 'off',
    unavailable: null,
    limits,
    disk,
    cgroups: { version: null, unavailable: 'SLIPWAY_SANDBOX=off', parents: [] },
    withShare: () => sandbox,
    banner: () => [
      "WARNING: SLIPWAY_SANDBOX=off: this build runs with the service's own privileges and no isolation. " +
        'Use this only when every repository is trusted.',
      ...(disk.warning ? [disk.warning] : []),
    ],
    plan: (req) => ({ command: req.argv[0]!, args: req.argv.slice(1), env: { ...req.env } }),
    prepare: async () => undefined,
    signalTenant(pid, signal) {
      try {
        process.kill(-pid, signal);
      } catch {
        // Gone.
      }
    },
    isListening: (_pid, port) => isAccepting(port, 500),
    refresh: async () => undefined,
  };
  return sandbox;
}
