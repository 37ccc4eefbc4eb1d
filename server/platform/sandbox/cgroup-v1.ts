import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  empty,
  endOf,
  errno,
  field,
  limitWatch,
  LIMIT_HIT_CPU_SHARE,
  nearProcessLimit,
  nextName,
  once,
  read,
  removeAll,
  sweepMoved,
} from './cgroup-common.ts';
import type { Cgroups, GroupLimits, SandboxGroup } from './cgroup-types.ts';
import { SPARE_POOL, type CpuPools, type PoolMembership } from './cpu-pools.ts';

export interface V1Parents {
  memory: string;
  pids: string;
  cpu?: string;
  /** Where cpuacct is mounted apart from cpu (it tells the pools how busy they are). */
  cpuacct?: string;
}

/**
 * cgroup v1: one directory per controller. memory and pids hold the groups themselves
 * (`slipway/<group>`); cpu (and cpuacct) hold them in their plan's pool (`slipway/<plan>/<group>`,
 * cpu-pools.ts).
 */
export function v1Groups(parents: V1Parents, pools: CpuPools | null): Cgroups {
  return {
    version: 1,
    unavailable: null,
    parents: Object.values(parents),
    pools,
    create: (limits) => v1Group(parents, pools, limits),
  };
}

/** One v1 group's directories and the limits written to them. */
interface V1Group {
  readonly name: string;
  readonly memory: string;
  readonly pids: string;
  readonly processes: number;
  pool: PoolMembership | null;
  /** cpu, then cpuacct where it is apart: in the pool's directories. */
  cpuDirs: string[];
  /** The directories a move left (a spare's), swept into the new ones until the release. */
  leftBehind: string[];
  sweep?: { stop(): void };
  memoryBytes: number;
  cpuShare: number;
  watch?: ReturnType<typeof limitWatch>;
}

function v1Group(parents: V1Parents, pools: CpuPools | null, limits: GroupLimits): SandboxGroup {
  const name = nextName();
  const pool = limits.pool ?? null;
  pools?.joined(pool);
  const g: V1Group = {
    name,
    memory: join(parents.memory, name),
    pids: join(parents.pids, name),
    processes: limits.processes,
    pool,
    cpuDirs: cpuDirsIn(parents, pools, name, pool),
    leftBehind: [],
    // Any first write of the memory limit lowers it.
    memoryBytes: Number.MAX_SAFE_INTEGER,
    cpuShare: limits.cpu,
  };
  const dirs = () => [g.memory, g.pids, ...g.cpuDirs];
  const setLimits = (l: Omit<GroupLimits, 'processes'>) => {
    if (pools && (l.pool?.plan ?? null) !== (g.pool?.plan ?? null)) moveTo(g, parents, pools, l.pool ?? null);
    writeMemory(g, l.memoryBytes);
    g.cpuShare = l.cpu;
    writeCpu(g);
  };
  try {
    for (const dir of dirs()) mkdirSync(dir);
    setLimits({ ...limits, pool });
    writeFileSync(join(g.pids, 'pids.max'), String(limits.processes));
  } catch (err) {
    removeAll(dirs());
    pools?.left();
    throw new Error(`could not make the sandbox's control group ${g.memory}: ${errno(err)}`);
  }
  if (g.cpuDirs[0])
    g.watch = limitWatch(
      () => counters(g),
      () => writeCpu(g),
    );
  return {
    name,
    get dirs() {
      return dirs();
    },
    procs: dirs().map((d) => join(d, 'cgroup.procs')),
    setLimits,
    release: once(async () => {
      g.sweep?.stop();
      const all = [...dirs(), ...g.leftBehind];
      const emptied = await empty(all, () => undefined);
      g.watch?.stop();
      const end = endOf(g.watch, counters(g), g.memoryBytes, join(g.memory, 'memory.max_usage_in_bytes'));
      const removed = emptied && removeAll(all);
      pools?.left();
      return { ...end, removed };
    }),
  };
}

/** The group's cpu (and cpuacct) directories in `pool`'s pool (none without the cpu controller). */
function cpuDirsIn(parents: V1Parents, pools: CpuPools | null, name: string, pool: PoolMembership | null) {
  if (!parents.cpu) return [];
  const poolName = pools ? (pool?.plan ?? SPARE_POOL) : null;
  return [parents.cpu, ...(parents.cpuacct ? [parents.cpuacct] : [])].map((p) =>
    poolName ? join(p, poolName, name) : join(p, name),
  );
}

/** Moves the group's CPU directories into `next`'s pool (a spare learning its plan). */
function moveTo(g: V1Group, parents: V1Parents, pools: CpuPools, next: PoolMembership | null) {
  const to = cpuDirsIn(parents, pools, g.name, next);
  pools.joined(next);
  for (const dir of to) mkdirSync(dir);
  g.sweep?.stop();
  g.sweep = sweepMoved(to.map((dir, i) => [g.cpuDirs[i]!, dir] as const));
  g.leftBehind = [...g.leftBehind, ...g.cpuDirs];
  pools.left();
  g.cpuDirs = to;
  g.pool = next;
}

function writeMemory(g: V1Group, bytes: number) {
  const value = String(bytes);
  const memsw = join(g.memory, 'memory.memsw.limit_in_bytes');
  // memory.limit_in_bytes may never be above memory.memsw.limit_in_bytes (memory plus swap, set
  // to the same so that swap does not add to it): lower the first first, raise the second first.
  const hasSwap = existsSync(memsw);
  if (hasSwap && bytes > g.memoryBytes) writeFileSync(memsw, value);
  writeFileSync(join(g.memory, 'memory.limit_in_bytes'), value);
  if (hasSwap) writeFileSync(memsw, value);
  g.memoryBytes = bytes;
}

function writeCpu(g: V1Group) {
  const share = g.cpuShare * (g.watch?.lowered ? LIMIT_HIT_CPU_SHARE : 1);
  if (g.cpuDirs[0])
    writeFileSync(join(g.cpuDirs[0], 'cpu.shares'), String(Math.max(2, Math.round(1024 * share))));
}

function counters(g: V1Group) {
  const events = read(join(g.pids, 'pids.events'));
  if (events === null) return null;
  return {
    forks: field(events, 'max') ?? 0,
    atProcessLimit: Number(read(join(g.pids, 'pids.current'))) >= nearProcessLimit(g.processes),
    oomKills: field(read(join(g.memory, 'memory.oom_control')), 'oom_kill') ?? 0,
  };
}
