import { accessSync, constants, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errno, kill, read, tasks } from './cgroup-common.ts';
import type { Cgroups } from './cgroup-types.ts';
import { v1Groups } from './cgroup-v1.ts';
import { v2Groups } from './cgroup-v2.ts';
import { createCpuPools, SERVING_MARKER, v1PoolFiles, v2PoolFiles } from './cpu-pools.ts';

export type { Cgroups, GroupEnd, GroupLimits, SandboxGroup } from './cgroup-types.ts';
export { LIMIT_HIT_CPU_SHARE } from './cgroup-common.ts';

export interface DetectCgroupsOptions {
  /** The name of the directory under each hierarchy that holds the groups; default `slipway`. */
  parent?: string;
  /** /proc/self/mounts and /proc/self/cgroup, for tests. */
  mounts?: string;
  selfCgroup?: string;
}

interface Mount {
  dir: string;
  type: string;
  options: string[];
}

function readMounts(text: string): Mount[] {
  return text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f) => f.length >= 4)
    .map((f) => ({
      // Spaces and the like are octal-escaped in /proc/mounts.
      dir: f[1]!.replace(/\\(\d{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8))),
      type: f[2]!,
      options: f[3]!.split(','),
    }));
}

/**
 * Finds out once, at start-up, whether this process can give each sandbox a control group: cgroup
 * v2 where the memory and pids controllers can be enabled for a subtree this process may write
 * (the hierarchy's root as root), else the v1 memory, pids and cpu hierarchies (as root). It costs
 * a few reads and one probe group made and removed. Groups a crashed service left behind are
 * removed here too.
 */
export function detectCgroups(opts: DetectCgroupsOptions = {}): Cgroups {
  const parentName = opts.parent ?? 'slipway';
  if (process.platform !== 'linux') return none('control groups need Linux');
  const mounts = readMounts(opts.mounts ?? read('/proc/self/mounts') ?? '');
  const unified = mounts.find((m) => m.type === 'cgroup2');
  const v1 = (controller: string) =>
    mounts.find((m) => m.type === 'cgroup' && m.options.includes(controller))?.dir;
  const reasons: string[] = [];

  if (unified) {
    const controllers = (read(join(unified.dir, 'cgroup.controllers')) ?? '').trim().split(/\s+/);
    if (controllers.includes('memory') && controllers.includes('pids')) {
      const parent = join(unified.dir, parentName);
      try {
        // The root may hold processes and enable controllers for its children at once; a group
        // below it could not (cgroup v2's rule of no processes in inner groups).
        for (const dir of [unified.dir, parent]) {
          mkdirSync(dir, { recursive: true });
          writeFileSync(join(dir, 'cgroup.subtree_control'), '+memory +pids');
        }
        // The CPU share is worth having, not worth refusing groups for (the cpu controller
        // cannot be enabled while real-time processes run outside the root).
        let hasCpu = controllers.includes('cpu');
        try {
          if (hasCpu)
            for (const dir of [unified.dir, parent])
              writeFileSync(join(dir, 'cgroup.subtree_control'), '+cpu');
        } catch {
          hasCpu = false;
        }
        // The plans' pools sit between `slipway` and the groups: they pass the same controllers on.
        const pools = hasCpu ? createCpuPools(v2PoolFiles(parent, '+memory +pids +cpu')) : null;
        const cgroups = v2Groups(parent, hasCpu, pools);
        probe(cgroups);
        return cgroups;
      } catch (err) {
        reasons.push(
          `cgroup v2 at ${unified.dir}: cannot make ${parent} with the memory and pids controllers (${errno(err)})`,
        );
      }
    } else if (!v1('memory')) {
      reasons.push(`cgroup v2 at ${unified.dir} offers no memory and pids controllers to this process`);
    }
  }

  const memory = v1('memory');
  const pids = v1('pids');
  const cpu = v1('cpu');
  // cpuacct tells how busy each plan's pool is; often mounted with cpu (then in the same directory).
  const cpuacct = v1('cpuacct');
  if (memory && pids) {
    const dirs = {
      memory: join(memory, parentName),
      pids: join(pids, parentName),
      ...(cpu ? { cpu: join(cpu, parentName) } : {}),
      ...(cpu && cpuacct && cpuacct !== cpu ? { cpuacct: join(cpuacct, parentName) } : {}),
    };
    try {
      for (const dir of Object.values(dirs)) {
        mkdirSync(dir, { recursive: true });
        accessSync(join(dir, 'cgroup.procs'), constants.W_OK);
      }
      const pools = dirs.cpu ? createCpuPools(v1PoolFiles(dirs.cpu, dirs.cpuacct ?? null)) : null;
      const cgroups = v1Groups(dirs, pools);
      probe(cgroups);
      return cgroups;
    } catch (err) {
      reasons.push(`cgroup v1: cannot make ${dirs.memory} (${errno(err)}); the service must run as root`);
    }
  } else if (!unified) {
    reasons.push('no cgroup file system is mounted (/sys/fs/cgroup)');
  } else if (memory || pids) {
    reasons.push('cgroup v1 has no ' + (memory ? 'pids' : 'memory') + ' controller');
  }
  return none(reasons.join('; '));
}

function none(reason: string): Cgroups {
  return {
    version: null,
    unavailable: reason,
    parents: [],
    create() {
      throw new Error(`no control groups: ${reason}`);
    },
  };
}

/** Makes and removes one group (whatever the kernel refuses shows now, not at the first build), and removes leftovers. */
function probe(cgroups: Cgroups): void {
  removeStale(cgroups);
  const group = cgroups.create({ memoryBytes: 64 * 1024 ** 2, cpu: 1, processes: 16 });
  for (const dir of group.dirs) rmdirSync(dir);
  cgroups.pools?.left();
}

const GROUP_NAME = /^(\d+)-\d+$/;

/** The pid of the process that made a group or a pool's serving marker (cpu-pools.ts); null: neither. */
function ownerOf(name: string): number | null {
  const m = GROUP_NAME.exec(name) ?? SERVING_MARKER.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Every group directory under `parent`, also those one level down, in a pool (cpu-pools.ts),
 * with the pools' serving markers.
 */
function groupDirsUnder(parent: string): { name: string; dir: string }[] {
  const found: { name: string; dir: string }[] = [];
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (GROUP_NAME.test(entry.name)) found.push({ name: entry.name, dir: join(parent, entry.name) });
    else
      for (const inner of readdirSync(join(parent, entry.name), { withFileTypes: true }))
        if (inner.isDirectory() && ownerOf(inner.name) !== null)
          found.push({ name: inner.name, dir: join(parent, entry.name, inner.name) });
  }
  return found;
}

/**
 * Groups and serving markers whose service is gone (it crashed): the groups' processes are killed
 * and the directories removed.
 */
function removeStale(cgroups: Cgroups): void {
  const byName = new Map<string, string[]>();
  for (const parent of cgroups.parents)
    for (const { name, dir } of groupDirsUnder(parent)) byName.set(name, [...(byName.get(name) ?? []), dir]);
  for (const [name, dirs] of byName) {
    const owner = ownerOf(name)!;
    if (owner === process.pid || alive(owner)) continue;
    for (const dir of dirs) for (const pid of tasks(dir)) kill(pid);
    for (const dir of dirs) {
      try {
        rmdirSync(dir);
      } catch {
        // Still busy: the next start tries again.
      }
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
