import { describeBytes } from '../../../core/format.ts';
import type { SandboxShare } from '../spawn.ts';
import type { SandboxState } from './state.ts';

/** The first lines of every build log: what the code may do, with `share` when a plan gives one. */
export function banner(s: SandboxState, share: SandboxShare | undefined): string[] {
  const { limits, cgroups, disk } = s;
  const rest = `${describeBytes(limits.diskBytes)} of disk, network: ${network(s)}`;
  const diskWarning = disk.warning ? [disk.warning] : [];
  if (cgroups.version) {
    const memory = describeBytes(share?.memoryBytes ?? limits.memoryBytes);
    const whose = share ? ` (${share.plan} plan)` : '';
    // The plan's pool cap (cpu-pools.ts), where there are pools.
    const cap =
      share?.cpuCap && cgroups.pools
        ? ` (${Math.round(share.cpuCap * 1000) / 10}% of the machine's CPUs for all ${share.plan} sandboxes while a higher plan's are busy)`
        : '';
    return [
      `Sandbox: ${limits.processes} processes, ${memory} of memory in all${whose}, ` +
        `CPU share ${share?.cpu ?? 1}${cap}, ${rest}`,
      ...diskWarning,
    ];
  }
  return [
    `Sandbox: ${limits.processes} processes, ${describeBytes(limits.memoryBytes)} of memory per process, ${rest}`,
    'Memory is bounded per process only, not for the build as a whole, and CPU is not shared out by ' +
      `plan: this machine gives the service no control groups (${cgroups.unavailable}).`,
    ...diskWarning,
  ];
}

const network = (s: SandboxState) =>
  s.config.allow.length
    ? `public internet, plus ${s.config.allow.join(', ')} (SLIPWAY_SANDBOX_ALLOW)`
    : 'public internet only';
