import type { PlanName } from '../../../core/plan-limits.ts';
import type { LookupAll } from '../../../core/ssrf.ts';
import type { Cgroups, SandboxGroup } from '../cgroups.ts';
import type { findTools } from '../detect.ts';
import type { SandboxLimits, SandboxRequest, SandboxShare, SpawnPlan } from '../spawn.ts';
import type { WorkspaceDisks } from '../workspace-disk.ts';

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
  /**
   * The CPU this process's edge spent serving each plan's sites in its last tick, in CPUs: a busy
   * paying plan's traffic holds the lower plans to their `cpu-cap` (cpu-pools.ts,
   * CpuPools.served). Absent where sandboxes have no CPU pools.
   */
  served?(cpuByPlan: ReadonlyMap<PlanName, number>): void;
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
