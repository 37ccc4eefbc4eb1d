import type { RuntimeSupervisor } from '../serving/roles.ts';
import { every } from '../../core/every.ts';
import { sample } from './runtime-sampler/sample.ts';
import { createSamplerState, type RuntimeSamplerOptions, type SamplerDeps } from './runtime-sampler/state.ts';
import { watching } from './runtime-sampler/supervisor.ts';

export type { RuntimeSamplerOptions } from './runtime-sampler/state.ts';

export interface RuntimeSampler {
  /** The supervisor to hand to the launcher: it tells the sampler which apps run. */
  supervisor: RuntimeSupervisor;
  /** Takes one sample of every running app and stores it (the timer calls it). */
  sample(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Samples the CPU and memory of the server apps this edge runs, every `intervalMs`, into
 * per-minute rows. CPU is the group's CPU time between two samples over the wall time between
 * them, so an app's first sample after a (re)start only sets the baseline. Its parts, in
 * runtime-sampler/: state.ts (the apps running, their baselines), supervisor.ts (the supervisor
 * that tells which apps run), sample.ts (one sample of them all).
 */
export function startRuntimeSampler(
  deps: SamplerDeps,
  inner: RuntimeSupervisor,
  opts: RuntimeSamplerOptions,
): RuntimeSampler {
  const st = createSamplerState(deps, inner, opts);
  const take = () => sample(st);
  // sample() reports its own errors and never rejects.
  const timer = every(opts.intervalMs, take, {
    clock: deps.clock,
    log: deps.log,
    name: 'sampling the CPU and memory of server apps',
  });
  return {
    supervisor: watching(st),
    sample: take,
    async stop() {
      await timer.stop();
      await st.sampling;
    },
  };
}
