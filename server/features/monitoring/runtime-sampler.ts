import { performance } from 'node:perf_hooks';
import type { RuntimeSupervisor } from '../serving/index.ts';
import { every } from '../../core/every.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { recordRuntimeSamples, type RuntimeSample } from './record-runtime-samples.ts';
import { CLOCK_TICKS_PER_SECOND, readProcessGroups, type GroupUsage } from './proc-stats.ts';

export interface RuntimeSampler {
  /** The supervisor to hand to the launcher: it tells the sampler which apps run. */
  supervisor: RuntimeSupervisor;
  /** Takes one sample of every running app and stores it (the timer calls it). */
  sample(): Promise<void>;
  stop(): Promise<void>;
}

export interface RuntimeSamplerOptions {
  intervalMs: number;
  /** Reads process groups; /proc by default. */
  read?: (pgids: readonly number[]) => Promise<Map<number, GroupUsage>>;
  /** Monotonic milliseconds for the time between samples; performance.now() by default. */
  nowMs?: () => number;
}

interface Baseline {
  pid: number;
  cpuTicks: number;
  atMs: number;
}

/**
 * Samples the CPU and memory of the server apps this edge runs, every `intervalMs`, into
 * per-minute rows. CPU is the group's CPU time between two samples over the wall time between
 * them, so an app's first sample after a (re)start only sets the baseline.
 */
export function startRuntimeSampler(
  deps: Pick<Deps, 'db' | 'metrics' | 'clock' | 'log'>,
  inner: RuntimeSupervisor,
  opts: RuntimeSamplerOptions,
): RuntimeSampler {
  const read = opts.read ?? ((pgids) => readProcessGroups(pgids));
  const nowMs = opts.nowMs ?? (() => performance.now());
  const running = new Set<string>();
  const baselines = new Map<string, Baseline>();
  const projects = new Map<string, string>();
  let sampling: Promise<void> = Promise.resolve();

  const supervisor: RuntimeSupervisor = {
    ...inner,
    async start(deploymentId, spec) {
      running.add(deploymentId);
      try {
        return await inner.start(deploymentId, spec);
      } catch (err) {
        running.delete(deploymentId);
        throw err;
      }
    },
    async stop(deploymentId) {
      running.delete(deploymentId);
      baselines.delete(deploymentId);
      await inner.stop(deploymentId);
    },
    async stopAll() {
      running.clear();
      baselines.clear();
      await inner.stopAll();
    },
  };

  async function projectsOf(ids: string[]): Promise<Map<string, string>> {
    const missing = ids.filter((id) => !projects.has(id));
    if (missing.length > 0) {
      const rows = await deps.db
        .selectFrom('deployments')
        .select(['id', 'project_id'])
        .where('id', 'in', missing)
        .execute();
      for (const r of rows) projects.set(r.id, r.project_id);
    }
    return projects;
  }

  async function sampleOnce(): Promise<void> {
    const pids = new Map<string, number>();
    for (const id of running) {
      const pid = inner.status(id)?.pid;
      if (pid !== undefined) pids.set(id, pid);
    }
    for (const id of baselines.keys()) if (!pids.has(id)) baselines.delete(id);
    if (pids.size === 0) return;
    const usage = await read([...pids.values()]);
    const atMs = nowMs();
    const at = deps.clock.now();
    const owners = await projectsOf([...pids.keys()]);
    const batch: RuntimeSample[] = [];
    for (const [deploymentId, pid] of pids) {
      const u = usage.get(pid);
      const prev = baselines.get(deploymentId);
      if (!u) {
        baselines.delete(deploymentId);
        continue;
      }
      baselines.set(deploymentId, { pid, cpuTicks: u.cpuTicks, atMs });
      const projectId = owners.get(deploymentId);
      // A new pid is a restarted app: its CPU counters started again from zero.
      if (!prev || prev.pid !== pid || !projectId || atMs <= prev.atMs) continue;
      const seconds = (atMs - prev.atMs) / 1000;
      // A process of the group that exited takes its CPU time with it: never report less than 0.
      const cpuSeconds = Math.max(0, u.cpuTicks - prev.cpuTicks) / CLOCK_TICKS_PER_SECOND;
      batch.push({
        projectId,
        deploymentId,
        at,
        cpuPercent: (cpuSeconds / seconds) * 100,
        ramBytes: u.rssBytes,
      });
    }
    await recordRuntimeSamples(deps, batch);
  }

  const sample = () => {
    sampling = sampling.then(sampleOnce).catch((err: unknown) => {
      deps.log.warn({ err }, 'could not sample the CPU and memory of server apps');
    });
    return sampling;
  };
  // sample() reports its own errors and never rejects.
  const timer = every(opts.intervalMs, sample, {
    clock: deps.clock,
    log: deps.log,
    name: 'sampling the CPU and memory of server apps',
  });

  return {
    supervisor,
    sample,
    async stop() {
      await timer.stop();
      await sampling;
    },
  };
}
