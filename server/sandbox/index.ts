import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Config, SandboxConfig } from '../config.ts';
import { every } from '../lib/every.ts';
import { isAccepting } from '../lib/free-port.ts';
import { describeBytes } from '../lib/format.ts';
import { systemLookup, type LookupAll } from '../lib/ssrf.ts';
import { detectCgroups, type Cgroups, type SandboxGroup } from './cgroups.ts';
import { findTools, trySandbox } from './detect.ts';
import { buildNetworkPolicy, nftRuleset, parseRange, type NetworkPolicy } from './network-policy.ts';
import { commandName, descendants, listensOn } from './processes.ts';
import { createWorkspaceDisks, type WorkspaceDisks } from './workspace-disk.ts';
import {
  INSIDE_UID,
  planSpare,
  planSpawn,
  spareInput,
  toolchainDirs,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxShare,
  type SpawnPlan,
  type SpawnSettings,
} from './spawn.ts';

export type { SandboxRequest, SandboxShare, SpawnPlan } from './spawn.ts';

/** Builds and apps are refused: the sandbox cannot run here and the operator did not turn it off. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

/** What every piece of tenant code (git, install, build, server apps) is run through. */
export interface Sandbox {
  /** `bubblewrap`: contained; `off`: the operator's explicit single-trusted-user mode. */
  readonly mode: 'bubblewrap' | 'off';
  /** Why the sandbox cannot run here (then plan() throws), or null. */
  readonly unavailable: string | null;
  readonly limits: SandboxLimits & { diskBytes: number };
  /** Build workspaces, and how their disk limit is held (workspace-disk.ts). */
  readonly disk: WorkspaceDisks;
  /**
   * Whether each sandbox gets a control group (cgroups.ts): `version` null (and `unavailable`
   * saying why) where none can be had; then memory is bounded per process only.
   */
  readonly cgroups: Pick<Cgroups, 'version' | 'unavailable' | 'parents'>;
  /** The share of withShare(), if this is such a view. */
  readonly share?: SandboxShare;
  /** The first lines of every build log: what the code may do. */
  banner(): string[];
  /**
   * How to spawn `req`, in a control group of its own where there are groups (SpawnPlan.group);
   * throws SandboxUnavailableError when builds are refused.
   */
  plan(req: SandboxRequest): SpawnPlan;
  /** The same sandbox with `share` as the default of every request (a build's, from its plan). */
  withShare(share: SandboxShare): Sandbox;
  /**
   * bubblewrap: a server app's sandbox on `port` to start ahead of its command (spawn.ts,
   * planSpare), and what to write to it to run `req` (startSpare). A spare made before the
   * current `generation` has older network rules: discard it.
   */
  spare?: {
    plan(port: number): SpawnPlan;
    /** Also sets the spare's group (its plan's `group`) to `req.share`, before the app starts. */
    input(req: SandboxRequest, group?: SandboxGroup): Buffer;
    generation(): number;
  };
  /** Hands freshly made directories to the sandbox's user, so that tenant code can write them. */
  prepare(dirs: readonly string[]): Promise<void>;
  /** Signals the tenant's processes under the spawned `pid` (not the sandbox's own helpers). */
  signalTenant(pid: number, signal: NodeJS.Signals): void;
  /** Whether a server app spawned as `pid` listens on `port` yet. */
  isListening(pid: number, port: number): Promise<boolean>;
  /** Re-resolves the host names of the allow list. */
  refresh(): Promise<void>;
}

export interface CreateSandboxOptions {
  dataDir: string;
  /** A directory that builds write to; the start-up check binds it as a build would. */
  workspacesDir: string;
  /** Directories the sandbox's user must be able to pass through to reach what is bound. */
  searchable?: string[];
  lookup: LookupAll;
  /** Where the sandbox runs as another user: true when the service runs as root. */
  isRoot?: boolean;
  /** The sandbox's programs; default: looked up in the system's directories. */
  tools?: ReturnType<typeof findTools>;
  /** Control groups; default: detectCgroups(). */
  cgroups?: Cgroups;
}

/** The first directory from `dir` up to `/` that others may not pass through, or null. */
async function firstUnsearchable(dir: string): Promise<string | null> {
  for (let d = dir; ; d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) return d;
    if (d === dirname(d)) return null;
  }
}

/** Helpers of the sandbox itself, never signalled as the tenant's. */
const HELPERS = new Set(['setpriv', 'pasta', 'passt', 'passt.avx2', 'pasta.avx2', 'bwrap', 'prlimit']);

function offSandbox(limits: Sandbox['limits'], disk: WorkspaceDisks): Sandbox {
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

/** The limits of a sandbox's control group: its request's share, else SLIPWAY_SANDBOX_MEMORY and a CPU share of 1. */
function groupLimits(limits: SandboxLimits, share: SandboxShare | undefined) {
  return {
    memoryBytes: share?.memoryBytes ?? limits.memoryBytes,
    cpu: share?.cpu ?? 1,
    processes: limits.processes,
  };
}

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
  const etcDir = join(opts.dataDir, 'sandbox', 'etc');
  // Made once per policy, not per command: only the allow list's DNS changes it.
  const settingsFor = (policy: NetworkPolicy): SpawnSettings => ({
    tools: 'tools' in found ? found.tools : (undefined as never),
    limits,
    rules: nftRuleset(policy),
    toolchains: toolchainDirs(process.execPath, config.readOnly),
    etcDir,
    hostPorts: config.hostPorts,
    node: process.execPath,
    ...(isRoot ? { user: config.user } : {}),
  });
  let settings = settingsFor(await buildNetworkPolicy(config.allow, { lookup: opts.lookup }));
  let generation = 0;
  const refresh = async () => {
    const next = settingsFor(await buildNetworkPolicy(config.allow, { lookup: opts.lookup }));
    if (next.rules !== settings.rules) generation++;
    settings = next;
  };

  let unavailable: string | null = null;
  if ('missing' in found) {
    unavailable = `these programs are missing: ${found.missing.join(', ')}. Install them`;
  } else if (process.platform !== 'linux') {
    unavailable = 'it needs Linux (user, PID and network namespaces)';
  } else {
    await mkdir(etcDir, { recursive: true });
    await writeFile(
      join(etcDir, 'passwd'),
      `sandbox:x:${INSIDE_UID}:${INSIDE_UID}:Slipway sandbox:/tmp:/bin/sh\n`,
    );
    await writeFile(join(etcDir, 'group'), `sandbox:x:${INSIDE_UID}:\n`);
    await writeFile(join(etcDir, 'gitconfig'), '[safe]\n\tdirectory = *\n');
    const probe = join(opts.workspacesDir, `.sandbox-check-${process.pid}`);
    await mkdir(probe, { recursive: true });
    if (isRoot) {
      // bwrap binds paths as the sandbox's user, who must be able to pass through (not list) the
      // directories above them.
      for (const dir of [
        opts.dataDir,
        opts.workspacesDir,
        join(opts.dataDir, 'sandbox'),
        etcDir,
        ...(opts.searchable ?? []),
      ]) {
        await mkdir(dir, { recursive: true });
        const { mode } = await stat(dir);
        if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o001);
      }
      await chown(probe, config.user.uid, config.user.gid);
    }
    const blocked = isRoot ? await firstUnsearchable(dirname(opts.dataDir)) : null;
    const failure = blocked
      ? `the sandbox's user (${config.user.uid}) cannot pass through ${blocked} to the data directory: ` +
        `make it searchable (chmod o+x ${blocked}) or move SLIPWAY_DATA_DIR`
      : await trySandbox(settings, probe);
    await rm(probe, { recursive: true, force: true });
    if (failure) unavailable = blocked ? failure : `a test sandbox failed: ${failure}`;
  }
  if (unavailable) {
    unavailable =
      `Builds and server apps are refused: the sandbox cannot run on this machine: ${unavailable}. ` +
      'docs/security.md says what it needs (bubblewrap, passt, nftables, a usable /dev/net/tun); ' +
      'set SLIPWAY_SANDBOX=off only if one trusted user deploys here.';
  }

  // Host names of the allow list follow their DNS: looked up again every five minutes. A failed
  // look-up keeps the last addresses, and the next one tries again.
  if (config.allow.some((entry) => parseRange(entry) === null)) {
    every(5 * 60_000, refresh, { onError: () => undefined });
  }
  const network = () =>
    config.allow.length
      ? `public internet, plus ${config.allow.join(', ')} (SLIPWAY_SANDBOX_ALLOW)`
      : 'public internet only';
  /** A new group for one sandbox, or none where there are no groups. */
  const groupFor = (share: SandboxShare | undefined): SandboxGroup | undefined =>
    cgroups.version ? cgroups.create(groupLimits(limits, share)) : undefined;
  const inGroup = (share: SandboxShare | undefined, make: (group: SandboxGroup | undefined) => SpawnPlan) => {
    if (unavailable) throw new SandboxUnavailableError(unavailable);
    const group = groupFor(share);
    try {
      return make(group);
    } catch (err) {
      void group?.release();
      throw err;
    }
  };
  const banner = (share: SandboxShare | undefined) => {
    const rest = `${describeBytes(limits.diskBytes)} of disk, network: ${network()}`;
    const diskWarning = disk.warning ? [disk.warning] : [];
    if (cgroups.version) {
      const memory = describeBytes(share?.memoryBytes ?? limits.memoryBytes);
      const whose = share ? ` (${share.plan} plan)` : '';
      return [
        `Sandbox: ${limits.processes} processes, ${memory} of memory in all${whose}, ` +
          `CPU share ${share?.cpu ?? 1}, ${rest}`,
        ...diskWarning,
      ];
    }
    return [
      `Sandbox: ${limits.processes} processes, ${describeBytes(limits.memoryBytes)} of memory per process, ${rest}`,
      'Memory is bounded per process only, not for the build as a whole, and CPU is not shared out by ' +
        `plan: this machine gives the service no control groups (${cgroups.unavailable}).`,
      ...diskWarning,
    ];
  };
  const sandbox: Sandbox = {
    mode: 'bubblewrap',
    unavailable,
    limits,
    disk,
    cgroups,
    banner: () => banner(undefined),
    plan: (req) => inGroup(req.share, (group) => planSpawn(settings, req, group)),
    withShare(share) {
      return {
        ...sandbox,
        share,
        banner: () => banner(share),
        plan: (req) => sandbox.plan({ ...req, share: req.share ?? share }),
      };
    },
    spare: {
      // Its app, and so its plan, is not known yet: the group gets the app's share in input().
      plan: (port) => inGroup(undefined, (group) => planSpare(settings, port, group)),
      input(req, group) {
        group?.setLimits(groupLimits(limits, req.share));
        return spareInput(settings, req);
      },
      generation: () => generation,
    },
    async prepare(dirs) {
      if (!isRoot) return;
      for (const dir of dirs) await chown(dir, config.user.uid, config.user.gid);
    },
    signalTenant(pid, signal) {
      for (const child of descendants(pid)) {
        const name = commandName(child);
        if (name === null || HELPERS.has(name)) continue;
        try {
          process.kill(child, signal);
        } catch {
          // Gone meanwhile.
        }
      }
    },
    async isListening(pid, port) {
      // Any process inside the namespace will do: the first child of pasta is.
      const inside = descendants(pid).find((p) => commandName(p) !== null);
      return inside !== undefined && listensOn(inside, port);
    },
    refresh,
  };
  return sandbox;
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
