import { LRUCache } from 'lru-cache';
import type { PlanName } from '../../../core/plan-limits.ts';
import { systemClock, type Clock } from '../../../core/clock.ts';
import { every } from '../../../core/every.ts';

/** How often the edge tells the CPU pools what it served (their own tick, cpu-pools.ts). */
const TICK_MS = 250;
/** How long a project's plan is trusted before it is looked up again (a plan change shows after this). */
const PLAN_TTL_MS = 60_000;

export interface ServingLoadOptions {
  /** The plan of a project's organization (a database read; cached here). */
  lookUpPlan(projectId: string): Promise<PlanName>;
  /**
   * Takes the CPU this process spent serving each plan's sites in the last tick, in CPUs
   * (Sandbox.served: a paying plan's busy sites hold the lower plans to their `cpu-cap`).
   */
  served(cpuByPlan: ReadonlyMap<PlanName, number>): void;
  /** This process's CPU time so far, in microseconds (default: process.cpuUsage()). */
  cpuUsageUs?: () => number;
  clock?: Clock;
}

export interface ServingLoad {
  /** One answered request for a project (null: a host of none). Called on every request: a count. */
  record(projectId: string | null): void;
  /** Ends the ticks and takes back what was said (an empty report). */
  stop(): Promise<void>;
}

const processCpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * The edge's own work by plan: a paying tenant's static site is served by the service's process,
 * outside every sandbox, so its traffic would never count as the plan being busy. Every tick the
 * process's CPU time since the last is shared out among the plans in proportion to the requests
 * answered for each (an approximation: a proxied request and a cached file cost differently), and
 * reported. Projects whose plan is not known yet are looked up in the background and counted from
 * the next tick on.
 */
export function createServingLoad(opts: ServingLoadOptions): ServingLoad {
  const clock = opts.clock ?? systemClock;
  const cpuUsageUs = opts.cpuUsageUs ?? processCpuUs;
  const plans = new LRUCache<string, PlanName>({
    max: 10_000,
    ttl: PLAN_TTL_MS,
    // The clock's time (a test's fake), read afresh each time.
    perf: { now: () => clock.now().getTime() },
    ttlResolution: 0,
    fetchMethod: (projectId) => opts.lookUpPlan(projectId),
  });
  let counts = new Map<string, number>();
  let lastCpu = cpuUsageUs();
  let lastAt = clock.now().getTime();
  let reported = false;

  const tick = () => {
    const cpu = cpuUsageUs();
    const at = clock.now().getTime();
    const spent = (cpu - lastCpu) / 1000 / Math.max(1, at - lastAt);
    lastCpu = cpu;
    lastAt = at;
    const byProject = counts;
    counts = new Map();
    const requests = new Map<PlanName, number>();
    let total = 0;
    for (const [projectId, n] of byProject) {
      total += n;
      const plan = plans.peek(projectId, { allowStale: true });
      if (!plans.has(projectId)) void plans.fetch(projectId).catch(() => undefined);
      if (plan !== undefined) requests.set(plan, (requests.get(plan) ?? 0) + n);
    }
    if (total === 0 && !reported) return;
    const cpuByPlan = new Map<PlanName, number>();
    for (const [plan, n] of requests) cpuByPlan.set(plan, (spent * n) / total);
    reported = cpuByPlan.size > 0;
    opts.served(cpuByPlan);
  };
  const loop = every(TICK_MS, tick, { onError: () => undefined, clock });

  return {
    record(projectId) {
      if (projectId !== null) counts.set(projectId, (counts.get(projectId) ?? 0) + 1);
    },
    async stop() {
      await loop.stop();
      if (reported) opts.served(new Map());
      reported = false;
    },
  };
}
