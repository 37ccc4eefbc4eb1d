import type { SandboxConfig } from '../../config.ts';
import type { Cgroups, SandboxGroup } from '../cgroups.ts';
import type { findTools } from '../detect.ts';
import { buildNetworkPolicy, nftRuleset } from '../network-policy.ts';
import {
  toolchainDirs,
  type SandboxLimits,
  type SandboxShare,
  type SpawnPlan,
  type SpawnSettings,
} from '../spawn.ts';
import type { WorkspaceDisks } from '../workspace-disk.ts';
import { SandboxUnavailableError, type CreateSandboxOptions, type Sandbox } from './types.ts';

/**
 * What one bubblewrap sandbox keeps (createSandbox makes it once), passed to the functions that
 * check, plan, describe and refresh it rather than closed over.
 */
export interface SandboxState {
  config: SandboxConfig;
  opts: CreateSandboxOptions;
  limits: Sandbox['limits'];
  disk: WorkspaceDisks;
  cgroups: Cgroups;
  /** Whether the sandbox runs as another user (the service runs as root). */
  isRoot: boolean;
  found: ReturnType<typeof findTools>;
  /** The sandbox's own /etc files (passwd, group, gitconfig). */
  etcDir: string;
  /** The current network policy's settings: replaced by refresh(). */
  settings: SpawnSettings;
  /** Bumped when refresh() changes the network rules: older spares are discarded. */
  generation: number;
  /** Why builds and apps are refused, or null (Sandbox.unavailable). */
  unavailable: string | null;
}

/** Made once per policy, not per command: only the allow list's DNS changes it. */
export async function settingsFor(
  s: Omit<SandboxState, 'settings' | 'generation' | 'unavailable'>,
): Promise<SpawnSettings> {
  const policy = await buildNetworkPolicy(s.config.allow, { lookup: s.opts.lookup });
  return {
    tools: 'tools' in s.found ? s.found.tools : (undefined as never),
    limits: s.limits,
    rules: nftRuleset(policy),
    toolchains: toolchainDirs(process.execPath, s.config.readOnly),
    etcDir: s.etcDir,
    hostPorts: s.config.hostPorts,
    node: process.execPath,
    ...(s.isRoot ? { user: s.config.user } : {}),
  };
}

/** Re-resolves the host names of the allow list; new rules make a new generation. */
export async function refresh(s: SandboxState): Promise<void> {
  const next = await settingsFor(s);
  if (next.rules !== s.settings.rules) s.generation++;
  s.settings = next;
}

/** The limits of a sandbox's control group: its request's share, else SLIPWAY_SANDBOX_MEMORY and a CPU share of 1. */
export function groupLimits(limits: SandboxLimits, share: SandboxShare | undefined) {
  return {
    memoryBytes: share?.memoryBytes ?? limits.memoryBytes,
    cpu: share?.cpu ?? 1,
    processes: limits.processes,
    pool: share ? { plan: share.plan, cpuCap: share.cpuCap ?? null } : null,
  };
}

/**
 * A plan made in a new control group of its own (none where there are no groups), the group
 * released if planning fails; refused while the sandbox is unavailable.
 */
export function inGroup(
  s: SandboxState,
  share: SandboxShare | undefined,
  make: (group: SandboxGroup | undefined) => SpawnPlan,
): SpawnPlan {
  if (s.unavailable) throw new SandboxUnavailableError(s.unavailable);
  const group = s.cgroups.version ? s.cgroups.create(groupLimits(s.limits, share)) : undefined;
  try {
    return make(group);
  } catch (err) {
    void group?.release();
    throw err;
  }
}
