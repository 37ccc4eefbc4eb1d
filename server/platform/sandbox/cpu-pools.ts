import { cpus } from 'node:os';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PLAN_NAMES, type PlanName } from '../../core/plan-limits.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { every, type Every } from '../../core/every.ts';

/**
 * The plan a sandbox's CPU is counted under (GroupLimits.pool), with that plan's `cpu-cap`: the
 * part of the machine's CPUs all of the plan's sandboxes together may use while a higher plan's
 * sandboxes are busy (null: no cap).
 */
export interface PoolMembership {
  plan: PlanName;
  cpuCap: number | null;
}

/** A sandbox made before its plan is known (a server app's spare) waits in this pool, never capped. */
export const SPARE_POOL = 'spare';

/**
 * A higher plan counts as busy while its sandboxes together used at least this much CPU in the
 * last tick, and for BUSY_LINGER_MS after: the gaps between a build's commands (a checkout ends,
 * the install starts) do not lift the cap, and an idle server app does not set it.
 */
const BUSY_CPU = 0.05;
const BUSY_LINGER_MS = 2000;
const TICK_MS = 250;

/**
 * A process whose edge is busy serving a plan's sites (CpuPools.served) keeps an empty directory
 * of this name and its pid in the plan's pool, touched every tick: the edge's work is the
 * service's, outside every sandbox, and every process on the machine reads the pools' files.
 */
export const SERVING_MARKER = /^serving-(\d+)$/;

/** Where one pool's files are, per kind of cgroup: its directory, its CPU cap's file and its use. */
export interface PoolFiles {
  /** The directory that holds the plan's groups (in the cpu hierarchy; the only one on v2). */
  dir(pool: string): string;
  /** Makes the pool's directories where missing (v2: with the controllers its groups need). */
  ensure(pool: string): void;
  /** The pool's CPU time used so far, in microseconds, or null where it cannot be read. */
  usageUs(pool: string): number | null;
  /** Whether the pool holds any group now (what counts as busy where its use cannot be read). */
  hasGroups(pool: string): boolean;
  /** Caps the pool at `cpus` CPUs (null: lifts the cap). */
  writeCap(pool: string, cpus: number | null): void;
  /** Makes or touches the marker `name` (SERVING_MARKER) in the pool. */
  mark(pool: string, name: string): void;
  /** Removes the marker `name`, if there. */
  unmark(pool: string, name: string): void;
  /** When the pool's freshest marker was last touched (ms since the epoch), or null: none. */
  lastMarked(pool: string): number | null;
}

/** The marker functions of PoolFiles over real directories (the pool's `dir`). */
function markerFiles(dir: (pool: string) => string): Pick<PoolFiles, 'mark' | 'unmark' | 'lastMarked'> {
  return {
    mark(pool, name) {
      const path = join(dir(pool), name);
      const t = new Date();
      try {
        utimesSync(path, t, t);
      } catch {
        // Not made yet, or removed by a process's start (cgroups.ts removes those of dead pids).
        mkdirSync(path);
      }
    },
    unmark(pool, name) {
      try {
        rmdirSync(join(dir(pool), name));
      } catch {
        // Gone already.
      }
    },
    lastMarked(pool) {
      let last: number | null = null;
      for (const name of markersIn(dir(pool))) {
        try {
          const t = statSync(join(dir(pool), name)).mtimeMs;
          if (last === null || t > last) last = t;
        } catch {
          // Removed meanwhile.
        }
      }
      return last;
    },
  };
}

/** The names of the serving markers in a pool's directory. */
function markersIn(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && SERVING_MARKER.test(e.name))
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** cgroup v1: `cpu.cfs_quota_us` in the cpu hierarchy, the use from cpuacct (mounted with it or apart). */
export function v1PoolFiles(cpuParent: string, cpuacctParent: string | null): PoolFiles {
  const period = Number(readOr(join(cpuParent, 'cpu.cfs_period_us'), '100000')) || 100_000;
  const dir = (pool: string) => join(cpuParent, pool);
  return {
    dir,
    ...markerFiles(dir),
    ensure(pool) {
      mkdirSync(dir(pool), { recursive: true });
      if (cpuacctParent) mkdirSync(join(cpuacctParent, pool), { recursive: true });
    },
    usageUs(pool) {
      const raw = readOr(join(cpuacctParent ?? cpuParent, pool, 'cpuacct.usage'), '');
      return /^\d+$/.test(raw) ? Number(raw) / 1000 : null;
    },
    hasGroups: (pool) => hasSubdirectories(dir(pool)),
    writeCap(pool, n) {
      writeFileSync(
        join(dir(pool), 'cpu.cfs_quota_us'),
        n === null ? '-1' : String(Math.max(1000, Math.round(n * period))),
      );
    },
  };
}

/** cgroup v2: `cpu.max` and `cpu.stat`'s usage_usec of the pool's directory. */
export function v2PoolFiles(parent: string, controllers: string): PoolFiles {
  const dir = (pool: string) => join(parent, pool);
  return {
    dir,
    ...markerFiles(dir),
    ensure(pool) {
      const path = dir(pool);
      if (existsSync(path)) return;
      mkdirSync(path);
      writeFileSync(join(path, 'cgroup.subtree_control'), controllers);
    },
    usageUs(pool) {
      const m = /^usage_usec (\d+)$/m.exec(readOr(join(dir(pool), 'cpu.stat'), ''));
      return m ? Number(m[1]) : null;
    },
    hasGroups: (pool) => hasSubdirectories(dir(pool)),
    writeCap(pool, n) {
      writeFileSync(
        join(dir(pool), 'cpu.max'),
        n === null ? 'max 100000' : `${Math.max(1000, Math.round(n * 100_000))} 100000`,
      );
    },
  };
}

function hasSubdirectories(dir: string): boolean {
  try {
    return readdirSync(dir, { withFileTypes: true }).some(
      (e) => e.isDirectory() && !SERVING_MARKER.test(e.name),
    );
  } catch {
    return false;
  }
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return fallback;
  }
}

export interface CpuPools {
  /**
   * A group of `m`'s plan is being made (null: a spare's, in SPARE_POOL): its pool's directory
   * exists when this returns, and a busy higher plan's cap on lower plans is in place before the
   * group's first process runs. Call `left` when the group is gone.
   */
  joined(m: PoolMembership | null): string;
  left(): void;
  /**
   * The CPU this process's edge spent serving each plan's sites in its last tick, in CPUs
   * (edge/serving-load.ts). A plan at BUSY_CPU or more counts as busy, in every process on the
   * machine, while this process keeps saying so (its marker is touched) and for the linger after.
   * An empty map takes this process's word back.
   */
  served(cpuByPlan: ReadonlyMap<PlanName, number>): void;
  /** The caps in force now, by plan (for tests and the operator's metrics). */
  readonly capped: ReadonlyMap<PlanName, number>;
}

export interface CpuPoolsOptions {
  /** The machine's CPUs (default: os.cpus().length). */
  machineCpus?: number;
  /** The watch's time (a fake clock in tests drives its ticks). */
  clock?: Clock;
}

/**
 * The machine's CPU by plan. Each sandbox's CPU group sits in its plan's pool
 * (`slipway/<plan>/<group>`), so a plan's sandboxes can be capped together, whatever the number
 * of organizations behind them (free organizations cost nothing to make). A plan with a
 * `cpu-cap` is held to that part of the machine's CPUs while a higher plan (free < pro <
 * enterprise) is busy, and uses every CPU otherwise. A share (cpu.shares, cpu.weight) alone
 * cannot do this: on a machine whose CPUs slow each other down (forks and page-table work on one
 * CPU cost a process on another up to 1.6 x on the machines measured, docs/performance.md), a
 * flood on an otherwise idle CPU costs a neighbour its speed without taking its CPU.
 *
 * Every process of the service (builders, edges) computes the same caps from the same files, so
 * several on one machine agree; the watch runs only while this process has groups.
 */
export function createCpuPools(files: PoolFiles, opts: CpuPoolsOptions = {}): CpuPools {
  const machine = opts.machineCpus ?? Math.max(1, cpus().length);
  const clock = opts.clock ?? systemClock;
  const now = () => clock.now().getTime();
  /** Each plan's cpu-cap, as its groups here said (null: none). */
  const caps = new Map<PlanName, number | null>();
  /** When each plan was last busy (ms of the clock). */
  const lastBusy = new Map<PlanName, number>();
  const measure = busyMeter(files, lastBusy, now);
  /** The cap last written per plan, in CPUs (null: lifted). */
  const written = new Map<PlanName, number | null>();
  let members = 0;
  let watch: Every | null = null;

  /** Writes each capped plan's cap, or lifts it, where that changed. */
  const decide = () => {
    const t = now();
    for (const [plan, cap] of caps) {
      const higherBusy = PLAN_NAMES.slice(PLAN_NAMES.indexOf(plan) + 1).some(
        (p) => t - (lastBusy.get(p) ?? -Infinity) < BUSY_LINGER_MS,
      );
      const want = higherBusy && cap !== null ? cap * machine : null;
      // A plan without a cap that this process never capped has nothing to lift.
      const inForce = written.has(plan) ? written.get(plan) : cap === null ? null : undefined;
      if (inForce === want) continue;
      try {
        files.writeCap(plan, want);
        written.set(plan, want);
      } catch {
        // The pool is not made yet in this hierarchy: the next tick tries again.
      }
    }
  };

  return {
    joined(m) {
      const pool = m?.plan ?? SPARE_POOL;
      files.ensure(pool);
      members++;
      if (m) {
        caps.set(m.plan, m.cpuCap !== null && m.cpuCap < 1 ? m.cpuCap : null);
        // Its own sandbox makes its plan busy from its first moment, not a tick later.
        lastBusy.set(m.plan, now());
      }
      decide();
      watch ??= every(
        TICK_MS,
        () => {
          measure();
          decide();
        },
        { onError: () => undefined, clock },
      );
      return files.dir(pool);
    },
    left() {
      members = Math.max(0, members - 1);
      if (members > 0 || !watch) return;
      void watch.stop();
      watch = null;
    },
    served: servingMarker(files),
    get capped() {
      return new Map([...written].filter((e): e is [PlanName, number] => e[1] !== null));
    },
  };
}

/**
 * CpuPools.served over `files`: this process's marker in the pool of each plan its edge keeps busy
 * (the lowest plan's traffic caps no plan: it is not marked), taken out of the others.
 */
function servingMarker(files: PoolFiles): CpuPools['served'] {
  const marker = `serving-${process.pid}`;
  /** The plans whose pools hold the marker now. */
  const marking = new Set<PlanName>();
  return (cpuByPlan) => {
    const busy = new Set(
      [...cpuByPlan]
        .filter(([plan, cpu]) => cpu >= BUSY_CPU && PLAN_NAMES.indexOf(plan) > 0)
        .map(([plan]) => plan),
    );
    for (const plan of busy) {
      try {
        if (!marking.has(plan)) files.ensure(plan);
        files.mark(plan, marker);
        marking.add(plan);
      } catch {
        // The pool cannot be made here: the next tick tries again.
      }
    }
    for (const plan of marking) {
      if (busy.has(plan)) continue;
      files.unmark(plan, marker);
      marking.delete(plan);
    }
  };
}

/**
 * Sets in `lastBusy` when each plan was busy: its pool's use since the last call (where it cannot
 * be read: whether it has groups), or an edge's serving marker (this process's or another's).
 */
function busyMeter(files: PoolFiles, lastBusy: Map<PlanName, number>, now: () => number): () => void {
  const lastUsage = new Map<PlanName, number>();
  return () => {
    const t = now();
    for (const plan of PLAN_NAMES) {
      const used = files.usageUs(plan);
      if (used === null) {
        if (files.hasGroups(plan)) lastBusy.set(plan, t);
      } else {
        const before = lastUsage.get(plan);
        lastUsage.set(plan, used);
        if (before !== undefined && used - before >= BUSY_CPU * TICK_MS * 1000) lastBusy.set(plan, t);
      }
      const marked = files.lastMarked(plan);
      if (marked !== null && marked > (lastBusy.get(plan) ?? -Infinity))
        lastBusy.set(plan, Math.min(marked, t));
    }
  };
}
