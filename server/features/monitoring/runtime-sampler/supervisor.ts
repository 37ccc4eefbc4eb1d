import type { RuntimeSupervisor } from '../../serving/roles.ts';
import type { SamplerState } from './state.ts';

/** The inner supervisor, telling the sampler which apps run as it starts and stops them. */
export function watching(st: SamplerState): RuntimeSupervisor {
  const { inner } = st;
  return {
    ...inner,
    async start(deploymentId, spec) {
      st.running.add(deploymentId);
      try {
        return await inner.start(deploymentId, spec);
      } catch (err) {
        st.running.delete(deploymentId);
        throw err;
      }
    },
    async stop(deploymentId) {
      st.running.delete(deploymentId);
      st.baselines.delete(deploymentId);
      await inner.stop(deploymentId);
    },
    async stopAll() {
      st.running.clear();
      st.baselines.clear();
      await inner.stopAll();
    },
  };
}
