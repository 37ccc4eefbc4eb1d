import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { every } from '../../core/every.ts';

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

/**
 * A sandbox that hits its process limit (as many processes as it may have, or a fork refused) or
 * its memory limit (a process killed)
 * runs at this part of its CPU share from then on: a fork flood or a memory hog spends the
 * machine's time in the kernel (forks, reclaim) that other tenants then wait for. Legitimate
 * builds rarely hit either, and those that do still run: the share only counts under contention.
 */
export const LIMIT_HIT_CPU_SHARE = 1 / 16;
/**
 * A group holding this many processes counts as at its process limit: inside the sandbox the
 * same limit as RLIMIT_NPROC refuses forks before the group does (the group also holds the
 * sandbox's own helpers), and a flood stays just under it.
 */
const nearProcessLimit = (limit: number) => Math.max(1, Math.floor(limit * 0.9));
/** How often a group's limit counters are read (three small files). */
const LIMIT_WATCH_MS = 250;

/**
 * Watches a group's limit counters and calls `lower` (which writes the group's lowered CPU share)
 * once one has moved. `counters` is null once the group is gone: the watch ends then too.
 */
function limitWatch(
  counters: () => { forks: number; atProcessLimit: boolean; oomKills: number } | null,
  lower: () => void,
) {
  let lowered: GroupEnd['cpuLowered'] = null;
  const check = () => {
    if (lowered) return;
    const c = counters();
    if (!c) return void timer.stop();
    lowered = c.forks > 0 || c.atProcessLimit ? 'processes' : c.oomKills > 0 ? 'memory' : null;
    if (!lowered) return;
    void timer.stop();
    try {
      lower();
    } catch {
      // The group is being removed.
    }
  };
  // The counters' reads catch their own errors (a group removed meanwhile reads as gone).
  const timer = every(LIMIT_WATCH_MS, check, { onError: () => undefined });
  return {
    get lowered() {
      return lowered;
    },
    /** Reads the counters a last time (a flood in its last quarter second counts too) and stops. */
    stop() {
      check();
      void timer.stop();
    },
  };
}

/** The control group of one sandbox, made before it starts and removed when it ends. */
export interface SandboxGroup {
  readonly name: string;
  /** The `cgroup.procs` files the sandbox's first process writes its own pid to, before anything else. */
  readonly procs: readonly string[];
  /** Changes the limits (a spare sandbox learns its app's before the app starts). */
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
}

export interface DetectCgroupsOptions {
  /** The name of the directory under each hierarchy that holds the groups; default `slipway`. */
  parent?: string;
  /** /proc/self/mounts and /proc/self/cgroup, for tests. */
  mounts?: string;
  selfCgroup?: string;
}

/** How long release() waits for a group's processes to end after killing them. */
const RELEASE_TIMEOUT_MS = 30_000;

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

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** A `key value` line of a cgroup file (memory.events, memory.oom_control), or null. */
function field(text: string | null, key: string): number | null {
  const m = text ? new RegExp(`^${key} (\\d+)$`, 'm').exec(text) : null;
  return m ? Number(m[1]) : null;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

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
        const cgroups = v2Groups(parent, hasCpu);
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
  if (memory && pids) {
    const dirs = {
      memory: join(memory, parentName),
      pids: join(pids, parentName),
      ...(cpu ? { cpu: join(cpu, parentName) } : {}),
    };
    try {
      for (const dir of Object.values(dirs)) {
        mkdirSync(dir, { recursive: true });
        accessSync(join(dir, 'cgroup.procs'), constants.W_OK);
      }
      const cgroups = v1Groups(dirs);
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
  for (const dir of groupDirs(cgroups, group.name)) rmdirSync(dir);
}

/** A group's name: this process's pid first, so that another start can tell a crashed service's. */
let made = 0;
const nextName = () => `${process.pid}-${++made}`;

function groupDirs(cgroups: Cgroups, name: string): string[] {
  return cgroups.parents.map((p) => join(p, name));
}

/** Groups whose service is gone (it crashed): their processes are killed and the groups removed. */
function removeStale(cgroups: Cgroups): void {
  const names = new Set<string>();
  for (const parent of cgroups.parents) for (const name of readdirSync(parent)) names.add(name);
  for (const name of names) {
    const m = /^(\d+)-\d+$/.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const dirs = groupDirs(cgroups, name).filter((d) => existsSync(d));
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

function tasks(dir: string): number[] {
  return (read(join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number);
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Kills what is left in `dirs` until they are empty, then removes them after `read` has looked at
 * them. cgroup v1 has no cgroup.kill: the pids read from cgroup.procs are killed one by one, at
 * once (another process could only have the pid if the pid space wrapped around in between).
 */
async function empty(dirs: string[], killAll: () => void): Promise<boolean> {
  const deadline = Date.now() + RELEASE_TIMEOUT_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    const left = dirs.flatMap(tasks);
    if (left.length === 0) return true;
    if (Date.now() > deadline) return false;
    killAll();
    for (const pid of left) kill(pid);
    await sleep(wait);
  }
}

function removeAll(dirs: string[]): boolean {
  let removed = true;
  for (const dir of dirs) {
    try {
      rmdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') removed = false;
    }
  }
  return removed;
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/** cgroup v1: one directory per controller (memory, pids and, when mounted, cpu). */
function v1Groups(parents: { memory: string; pids: string; cpu?: string }): Cgroups {
  const cgroups: Cgroups = {
    version: 1,
    unavailable: null,
    parents: Object.values(parents),
    create(limits) {
      const name = nextName();
      const memory = join(parents.memory, name);
      const pids = join(parents.pids, name);
      const cpu = parents.cpu ? join(parents.cpu, name) : null;
      const dirs = [memory, pids, ...(cpu ? [cpu] : [])];
      let memoryBytes = limits.memoryBytes;
      let cpuShare = limits.cpu;
      let watch: ReturnType<typeof limitWatch> | undefined;
      const writeCpu = () => {
        const share = cpuShare * (watch?.lowered ? LIMIT_HIT_CPU_SHARE : 1);
        if (cpu) writeFileSync(join(cpu, 'cpu.shares'), String(Math.max(2, Math.round(1024 * share))));
      };
      const counters = () => {
        const events = read(join(pids, 'pids.events'));
        if (events === null) return null;
        return {
          forks: field(events, 'max') ?? 0,
          atProcessLimit: Number(read(join(pids, 'pids.current'))) >= nearProcessLimit(limits.processes),
          oomKills: field(read(join(memory, 'memory.oom_control')), 'oom_kill') ?? 0,
        };
      };
      const setLimits = (l: Omit<GroupLimits, 'processes'>) => {
        const bytes = String(l.memoryBytes);
        const memsw = join(memory, 'memory.memsw.limit_in_bytes');
        // memory.limit_in_bytes may never be above memory.memsw.limit_in_bytes (memory plus swap,
        // set to the same so that swap does not add to it): lower the first first, raise the second first.
        const hasSwap = existsSync(memsw);
        if (hasSwap && l.memoryBytes > memoryBytes) writeFileSync(memsw, bytes);
        writeFileSync(join(memory, 'memory.limit_in_bytes'), bytes);
        if (hasSwap) writeFileSync(memsw, bytes);
        cpuShare = l.cpu;
        writeCpu();
        memoryBytes = l.memoryBytes;
      };
      try {
        for (const dir of dirs) mkdirSync(dir);
        memoryBytes = Number.MAX_SAFE_INTEGER;
        setLimits(limits);
        writeFileSync(join(pids, 'pids.max'), String(limits.processes));
      } catch (err) {
        removeAll(dirs);
        throw new Error(`could not make the sandbox's control group ${memory}: ${errno(err)}`);
      }
      if (cpu) watch = limitWatch(counters, writeCpu);
      return {
        name,
        procs: dirs.map((d) => join(d, 'cgroup.procs')),
        setLimits,
        release: once(async () => {
          const emptied = await empty(dirs, () => undefined);
          watch?.stop();
          const ended = counters() ?? { forks: 0, oomKills: 0 };
          const peak = Number(read(join(memory, 'memory.max_usage_in_bytes')));
          const end: GroupEnd = {
            oomKills: ended.oomKills,
            memoryBytes,
            peakBytes: Number.isFinite(peak) && peak > 0 ? peak : null,
            removed: emptied && removeAll(dirs),
            forksRefused: ended.forks,
            cpuLowered: watch?.lowered ?? null,
          };
          return end;
        }),
      };
    },
  };
  return cgroups;
}

/** cgroup v2: one directory, with memory, pids and cpu enabled by its parent. */
function v2Groups(parent: string, hasCpu: boolean): Cgroups {
  return {
    version: 2,
    unavailable: null,
    parents: [parent],
    create(limits) {
      const name = nextName();
      const dir = join(parent, name);
      let memoryBytes = limits.memoryBytes;
      let cpuShare = limits.cpu;
      let watch: ReturnType<typeof limitWatch> | undefined;
      const writeCpu = () => {
        const share = cpuShare * (watch?.lowered ? LIMIT_HIT_CPU_SHARE : 1);
        if (hasCpu)
          writeFileSync(
            join(dir, 'cpu.weight'),
            String(Math.min(10_000, Math.max(1, Math.round(100 * share)))),
          );
      };
      const counters = () => {
        const events = read(join(dir, 'pids.events'));
        if (events === null) return null;
        return {
          forks: field(events, 'max') ?? 0,
          atProcessLimit: Number(read(join(dir, 'pids.current'))) >= nearProcessLimit(limits.processes),
          oomKills: field(read(join(dir, 'memory.events')), 'oom_kill') ?? 0,
        };
      };
      const setLimits = (l: Omit<GroupLimits, 'processes'>) => {
        writeFileSync(join(dir, 'memory.max'), String(l.memoryBytes));
        cpuShare = l.cpu;
        writeCpu();
        memoryBytes = l.memoryBytes;
      };
      try {
        mkdirSync(dir);
        setLimits(limits);
        // Swapped-out tmpfs and shared pages would otherwise leave the memory limit.
        if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
        writeFileSync(join(dir, 'pids.max'), String(limits.processes));
      } catch (err) {
        removeAll([dir]);
        throw new Error(`could not make the sandbox's control group ${dir}: ${errno(err)}`);
      }
      if (hasCpu) watch = limitWatch(counters, writeCpu);
      const killFile = join(dir, 'cgroup.kill');
      const canKill = existsSync(killFile);
      return {
        name,
        procs: [join(dir, 'cgroup.procs')],
        setLimits,
        release: once(async () => {
          const emptied = await empty([dir], () => {
            try {
              if (canKill) writeFileSync(killFile, '1');
            } catch {
              // Removed meanwhile, or an older kernel: the pids are killed one by one as well.
            }
          });
          watch?.stop();
          const ended = counters() ?? { forks: 0, oomKills: 0 };
          const peak = Number(read(join(dir, 'memory.peak')));
          return {
            oomKills: ended.oomKills,
            memoryBytes,
            peakBytes: Number.isFinite(peak) && peak > 0 ? peak : null,
            removed: emptied && removeAll([dir]),
            forksRefused: ended.forks,
            cpuLowered: watch?.lowered ?? null,
          };
        }),
      };
    },
  };
}
