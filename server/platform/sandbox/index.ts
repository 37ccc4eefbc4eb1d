import { join } from 'node:path';
import type { Config, SandboxConfig } from '../config.ts';
import { every } from '../../core/every.ts';
import { systemLookup } from '../../core/ssrf.ts';
import { detectCgroups } from './cgroups.ts';
import { bubblewrapSandbox } from './create/bubblewrap.ts';
import { offSandbox } from './create/off.ts';
import { whyUnavailable } from './create/start-up-check.ts';
import { refresh, settingsFor, type SandboxState } from './create/state.ts';
import type { CreateSandboxOptions, Sandbox } from './create/types.ts';
import { findTools } from './detect.ts';
import { parseRange } from './network-policy.ts';
import { createWorkspaceDisks } from './workspace-disk.ts';

// The sandbox's pieces, each in a file of its own under create/: what a bubblewrap sandbox
// keeps, its network settings and control groups (state.ts), the check at start-up
// (start-up-check.ts), what a build log's first lines say (banner.ts), the sandbox's methods
// (bubblewrap.ts), the sandbox turned off (off.ts), the interfaces (types.ts). What they share is
// one SandboxState, passed along.
export type { SandboxRequest, SandboxShare, SpawnPlan } from './spawn.ts';
export { SandboxUnavailableError, type CreateSandboxOptions, type Sandbox } from './create/types.ts';

/**
 * The sandbox as configured. With `bubblewrap` (the default) it checks once that a real sandbox
 * runs on this machine; when it does not, the sandbox is `unavailable` and refuses every build
 * and app with the reason, rather than running tenant code unconfined.
 */
export async function createSandbox(config: SandboxConfig, opts: CreateSandboxOptions): Promise<Sandbox> {
  const limits = {
    processes: config.limits.processes,
    memoryBytes: config.limits.memoryBytes,
    fileBytes: config.limits.diskBytes,
    tmpBytes: config.limits.tmpBytes,
    diskBytes: config.limits.diskBytes,
  };
  const isRoot = opts.isRoot ?? process.getuid?.() === 0;
  const disk = await createWorkspaceDisks({
    limitBytes: limits.diskBytes,
    workspacesDir: opts.workspacesDir,
    mode: config.diskMode,
    isRoot,
  });
  if (config.mode === 'off') return offSandbox(limits, disk);
  const cgroups = opts.cgroups ?? detectCgroups();
  const found = opts.tools ?? findTools();
  const base = {
    config,
    opts,
    limits,
    disk,
    cgroups,
    isRoot,
    found,
    etcDir: join(opts.dataDir, 'sandbox', 'etc'),
  };
  const planned = { ...base, settings: await settingsFor(base), generation: 0 };
  const s: SandboxState = { ...planned, unavailable: await whyUnavailable(planned) };

  // Host names of the allow list follow their DNS: looked up again every five minutes. A failed
  // look-up keeps the last addresses, and the next one tries again.
  if (config.allow.some((entry) => parseRange(entry) === null)) {
    every(5 * 60_000, () => refresh(s), { onError: () => undefined });
  }
  return bubblewrapSandbox(s);
}

/**
 * The sandbox of a worker or edge process, for its data directory, saying at start-up when it
 * cannot run or is turned off. Processes that run no tenant code (the API, the CLI) make none.
 */
export async function createServiceSandbox(
  config: Config,
  log?: { error(msg: string): void; warn(msg: string): void },
): Promise<Sandbox> {
  const sandbox = await createSandbox(config.sandbox, {
    dataDir: config.dataDir,
    workspacesDir: config.workspacesDir,
    searchable: [join(config.dataDir, 'runtimes')],
    lookup: systemLookup,
  });
  if (sandbox.unavailable) log?.error(sandbox.unavailable);
  else if (sandbox.mode === 'off') log?.warn(sandbox.banner().join(' '));
  else {
    if (sandbox.disk.warning) log?.warn(sandbox.disk.warning);
    if (sandbox.cgroups.unavailable) {
      log?.warn(
        `Sandboxes get no control group: ${sandbox.cgroups.unavailable}. Memory is bounded per process only ` +
          '(SLIPWAY_SANDBOX_MEMORY), not per build or app, and CPU is not shared out by plan; run the service ' +
          'as root or give it a cgroup v2 subtree (docs/operating.md#plan-limits).',
      );
    }
  }
  return sandbox;
}
