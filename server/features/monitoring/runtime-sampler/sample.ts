import { recordRuntimeSamples, type RuntimeSample } from '../record-runtime-samples.ts';
import { CLOCK_TICKS_PER_SECOND } from '../proc-stats.ts';
import type { SamplerState } from './state.ts';

/** Takes one sample of every running app and stores it, after the sample before; never rejects. */
export function sample(st: SamplerState): Promise<void> {
  st.sampling = st.sampling
    .then(() => sampleOnce(st))
    .catch((err: unknown) => {
      st.deps.log.warn({ err }, 'could not sample the CPU and memory of server apps');
    });
  return st.sampling;
}

async function sampleOnce(st: SamplerState): Promise<void> {
  const { baselines } = st;
  const pids = new Map<string, number>();
  for (const id of st.running) {
    const pid = st.inner.status(id)?.pid;
    if (pid !== undefined) pids.set(id, pid);
  }
  for (const id of baselines.keys()) if (!pids.has(id)) baselines.delete(id);
  if (pids.size === 0) return;
  const usage = await st.read([...pids.values()]);
  const atMs = st.nowMs();
  const at = st.deps.clock.now();
  const owners = await projectsOf(st, [...pids.keys()]);
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
  await recordRuntimeSamples(st.deps, batch);
}

/** The projects of these deployments, looking up those not known yet. */
async function projectsOf(st: SamplerState, ids: string[]): Promise<Map<string, string>> {
  const missing = ids.filter((id) => !st.projects.has(id));
  if (missing.length > 0) {
    const rows = await st.deps.db
      .selectFrom('deployments')
      .select(['id', 'project_id'])
      .where('id', 'in', missing)
      .execute();
    for (const r of rows) st.projects.set(r.id, r.project_id);
  }
  return st.projects;
}
