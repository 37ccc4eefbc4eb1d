import { performance } from 'node:perf_hooks';
import type { RuntimeSupervisor } from '../../serving/roles.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { readProcessGroups, type GroupUsage } from '../proc-stats.ts';

export interface RuntimeSamplerOptions {
  intervalMs: number;
  /** Reads process groups; /proc by default. */
  read?: (pgids: readonly number[]) => Promise<Map<number, GroupUsage>>;
  /** Monotonic milliseconds for the time between samples; performance.now() by default. */
  nowMs?: () => number;
}

export type SamplerDeps = Pick<Deps, 'db' | 'metrics' | 'clock' | 'log'>;

export interface Baseline {
  pid: number;
  cpuTicks: number;
  atMs: number;
}

/** What one sampler keeps (startRuntimeSampler makes it once), passed to its functions. */
export interface SamplerState {
  deps: SamplerDeps;
  /** The supervisor that runs the apps. */
  inner: RuntimeSupervisor;
  read: (pgids: readonly number[]) => Promise<Map<number, GroupUsage>>;
  nowMs: () => number;
  /** The apps started and not stopped, by deployment id. */
  running: Set<string>;
  /** Each app's last sample: the next one's CPU is counted from it. */
  baselines: Map<string, Baseline>;
  /** Each deployment's project, once looked up. */
  projects: Map<string, string>;
  /** The last sample, which the next one follows. */
  sampling: Promise<void>;
}

export function createSamplerState(
  deps: SamplerDeps,
  inner: RuntimeSupervisor,
  opts: RuntimeSamplerOptions,
): SamplerState {
  return {
    deps,
    inner,
    read: opts.read ?? ((pgids) => readProcessGroups(pgids)),
    nowMs: opts.nowMs ?? (() => performance.now()),
    running: new Set(),
    baselines: new Map(),
    projects: new Map(),
    sampling: Promise.resolve(),
  };
}
