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

/**
 * cgroup v2: one directory per group, with memory, pids and cpu enabled by its parent: its plan's
 * pool (`slipway/<plan>/<group>`, cpu-pools.ts) where the cpu controller is there, else `slipway`.
 */
export function v2Groups(parent: string, hasCpu: boolean, pools: CpuPools | null): Cgroups {
  return {
    version: 2,
    unavailable: null,
    parents: [parent],
    pools,
    create: (limits) => v2Group(parent, hasCpu, pools, limits),
  };
}

/** One v2 group's directory and the limits written to it. */
interface V2Group {
  readonly name: string;
  readonly hasCpu: boolean;
  readonly processes: number;
  pool: PoolMembership | null;
  dir: string;
  /** The directories a move left (a spare's), swept into the new one until the release. */
  leftBehind: string[];
  sweep?: { stop(): void };
  memoryBytes: number;
  cpuShare: number;
  watch?: ReturnType<typeof limitWatch>;
}

function v2Group(parent: string, hasCpu: boolean, pools: CpuPools | null, limits: GroupLimits): SandboxGroup {
  const name = nextName();
  const dirIn = (pool: PoolMembership | null) =>
    pools ? join(parent, pool?.plan ?? SPARE_POOL, name) : join(parent, name);
  const pool = limits.pool ?? null;
  pools?.joined(pool);
  const g: V2Group = {
    name,
    hasCpu,
    processes: limits.processes,
    pool,
    dir: dirIn(pool),
    leftBehind: [],
    memoryBytes: limits.memoryBytes,
    cpuShare: limits.cpu,
  };
  const first = g.dir;
  const setLimits = (l: Omit<GroupLimits, 'processes'>) => {
    const next = l.pool ?? null;
    if (pools && (next?.plan ?? null) !== (g.pool?.plan ?? null)) {
      // A spare learns its plan: its processes move into a group in that plan's pool (the memory
      // it charged so far stays with the old group until freed).
      pools.joined(next);
      const to = dirIn(next);
      make(g, to);
      g.sweep?.stop();
      g.sweep = sweepMoved([[g.dir, to]]);
      g.leftBehind = [...g.leftBehind, g.dir];
      pools.left();
      g.dir = to;
      g.pool = next;
    }
    writeFileSync(join(g.dir, 'memory.max'), String(l.memoryBytes));
    g.memoryBytes = l.memoryBytes;
    g.cpuShare = l.cpu;
    writeCpu(g);
  };
  try {
    make(g, g.dir);
    setLimits({ ...limits, pool });
  } catch (err) {
    removeAll([g.dir]);
    pools?.left();
    throw new Error(`could not make the sandbox's control group ${g.dir}: ${errno(err)}`);
  }
  if (hasCpu)
    g.watch = limitWatch(
      () => counters(g),
      () => writeCpu(g),
    );
  return {
    name,
    get dirs() {
      return [g.dir];
    },
    procs: [join(first, 'cgroup.procs')],
    setLimits,
    release: once(async () => {
      g.sweep?.stop();
      const all = [g.dir, ...g.leftBehind];
      const emptied = await empty(all, () => killAll(all));
      g.watch?.stop();
      const end = endOf(g.watch, counters(g), g.memoryBytes, join(g.dir, 'memory.peak'));
      const removed = emptied && removeAll(all);
      pools?.left();
      return { ...end, removed };
    }),
  };
}

/** Makes a group directory `at` without swap and with its process limit (setLimits writes the rest). */
function make(g: V2Group, at: string) {
  mkdirSync(at);
  // Swapped-out tmpfs and shared pages would otherwise leave the memory limit.
  if (existsSync(join(at, 'memory.swap.max'))) writeFileSync(join(at, 'memory.swap.max'), '0');
  writeFileSync(join(at, 'pids.max'), String(g.processes));
}

function writeCpu(g: V2Group) {
  const share = g.cpuShare * (g.watch?.lowered ? LIMIT_HIT_CPU_SHARE : 1);
  if (g.hasCpu)
    writeFileSync(join(g.dir, 'cpu.weight'), String(Math.min(10_000, Math.max(1, Math.round(100 * share)))));
}

function counters(g: V2Group) {
  const events = read(join(g.dir, 'pids.events'));
  if (events === null) return null;
  return {
    forks: field(events, 'max') ?? 0,
    atProcessLimit: Number(read(join(g.dir, 'pids.current'))) >= nearProcessLimit(g.processes),
    oomKills: field(read(join(g.dir, 'memory.events')), 'oom_kill') ?? 0,
  };
}

function killAll(dirs: readonly string[]) {
  for (const dir of dirs) {
    try {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
    } catch {
      // Removed meanwhile, or an older kernel: the pids are killed one by one as well.
    }
  }
}
