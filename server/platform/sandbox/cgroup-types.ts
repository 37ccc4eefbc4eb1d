import type { CpuPools, PoolMembership } from './cpu-pools.ts';

/**
 * What one sandbox may use as a whole: every process, shared memory and tmpfs pages (its /tmp and
 * /dev/shm) included. The per-process limits (prlimit) stay besides, as a second line.
 */
export interface GroupLimits {
  memoryBytes: number;
  /** CPU share under contention: 1 is the free plan's (cpu.shares 1024 on v1, cpu.weight 100 on v2). */
  cpu: number;
  /** Processes and threads at once (pids.max). */
  processes: number;
  /**
   * The plan whose CPU pool the group is in (cpu-pools.ts); null or absent: the spare pool, for a
   * sandbox made before its plan is known, moved when setLimits() names it.
   */
  pool?: PoolMembership | null;
}

/** How one sandbox's group ended. */
export interface GroupEnd {
  /** Processes the kernel killed because the group reached its memory limit. */
  oomKills: number;
  /** The memory limit the group ended with. */
  memoryBytes: number;
  /** The most memory the group used at once, where the kernel tells (v1; v2 from Linux 5.19). */
  peakBytes: number | null;
  /** false when the group could not be removed (it is then retried at the next start). */
  removed: boolean;
  /**
   * Forks its group's process limit refused (a sandbox's RLIMIT_NPROC, of the same number, often
   * refuses them first: then 0 though the limit was reached).
   */
  forksRefused: number;
  /**
   * Which limit, once hit, lowered the group's CPU share to LIMIT_HIT_CPU_SHARE of its own for
   * the rest of its run: `processes` (a fork refused) or `memory` (a process killed); null: none.
   */
  cpuLowered: 'processes' | 'memory' | null;
}

/** The control group of one sandbox, made before it starts and removed when it ends. */
export interface SandboxGroup {
  readonly name: string;
  /** The group's directories now (one per hierarchy on v1; a spare's move changes them). */
  readonly dirs: readonly string[];
  /** The `cgroup.procs` files the sandbox's first process writes its own pid to, before anything else. */
  readonly procs: readonly string[];
  /**
   * Changes the limits (a spare sandbox learns its app's before the app starts); a new `pool`
   * moves the group's processes into a group in that pool.
   */
  setLimits(limits: Omit<GroupLimits, 'processes'>): void;
  /**
   * Kills whatever is left in the group, waits until it is empty, reads how it ended and removes
   * it. Idempotent: every call gets the same promise.
   */
  release(): Promise<GroupEnd>;
}

export interface Cgroups {
  /** 2 (unified), 1 (the v1 memory, pids and cpu controllers) or null: no groups here. */
  readonly version: 1 | 2 | null;
  /** Why there are no groups (version null), in words for the operator. */
  readonly unavailable: string | null;
  /** The directories that hold the groups: one for v2, one per controller on v1. */
  readonly parents: readonly string[];
  /** A new, empty group with these limits; throws when the kernel refuses. */
  create(limits: GroupLimits): SandboxGroup;
  /** The plans' CPU pools, where the CPU controller is there (cpu-pools.ts). */
  readonly pools?: CpuPools | null;
}
