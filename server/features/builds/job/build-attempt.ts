import { BuildError } from '../../../platform/sandbox/build-error.ts';
import { decodeBuildSpec } from '../../../platform/store/build-spec.ts';
import type { BuildCacheStore } from '../build-cache-store.ts';
import type { DeploymentRow } from '../../deployments/index.ts';
import type { BuildAttempt, BuildJobOptions, Built } from './build-context.ts';
import { markBuilding, markDeploying, markLive } from '../../deployments/roles.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { failedLine, failQuietly } from './build-failure.ts';
import { buildFromSource, reuseBuild, storePrebuilt } from './build-sources.ts';
import type { LogBuffer } from './log-buffer.ts';

/** Builds the deployment; says whether it went live or failed (an error is thrown instead when it can). */
export async function runBuildAttempt(
  deps: Deps,
  opts: BuildJobOptions,
  cacheStore: BuildCacheStore,
  deployment: DeploymentRow,
  logs: LogBuffer,
  signal: AbortSignal,
): Promise<'live' | 'failed'> {
  const id = deployment.id;
  const project = await deps.db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', deployment.project_id)
    .executeTakeFirstOrThrow();
  if (project.status !== 'active') {
    logs.push('error', `Project ${project.name} is ${project.status}; nothing was built.`);
    logs.note(failedLine(deps, id, `The project is ${project.status}`));
    await logs.flush();
    await failQuietly(deps, id, `The project is ${project.status}`);
    return 'failed';
  }
  if (deployment.status !== 'queued') {
    // A worker died mid-build and the lease ran out: start over from a clean state.
    logs.note('==> Building again: an earlier attempt was interrupted');
    await deps.db
      .updateTable('deployments')
      .set({ status: 'queued', updated_at: deps.clock.now().toISOString() })
      .where('id', '=', id)
      .where('status', 'in', ['building', 'deploying'])
      .execute();
  }

  const attempt: BuildAttempt = { deps, opts, cacheStore, deployment, project, logs, signal };
  const started = Date.now();
  await logs.flush();
  await markBuilding(deps, id);
  // The build cache is saved once the deployment is live (or failed to start): not on its way.
  const later: { saveCache?: () => Promise<void> } = {};
  try {
    const built = await build(attempt, later);
    await goLive(attempt, built, started);
    return 'live';
  } finally {
    if (later.saveCache) {
      await later.saveCache().catch(() => {});
      await logs.flush();
    }
  }
}

/** The deployment's build: another deployment's reused, uploaded files as they are, or a build. */
function build(a: BuildAttempt, later: { saveCache?: () => Promise<void> }): Promise<Built> {
  if (a.deployment.source_deployment_id) return reuseBuild(a, a.deployment.source_deployment_id);
  const spec = specOf(a.deployment);
  if (spec.source.kind === 'prebuilt') return storePrebuilt(a, spec.source.files);
  return buildFromSource(a, spec, later);
}

/** What the deployment builds, as decided when it was queued. */
function specOf(d: DeploymentRow) {
  try {
    return decodeBuildSpec(d.id, d.build_spec);
  } catch (err) {
    // Building it again would not read it any better.
    throw new BuildError(`${(err as Error).message}. Start a new deployment.`);
  }
}

/** Brings the stored build up through the edge and makes the deployment live. */
async function goLive({ deps, opts, deployment, logs, signal }: BuildAttempt, built: Built, started: number) {
  const id = deployment.id;
  await logs.flush();
  signal.throwIfAborted();
  await markDeploying(deps, id, { buildDurationMs: Date.now() - started, artifactId: built.artifactId });

  const deployStarted = Date.now();
  logs.note('==> Deploying: waiting for the edge to serve it');
  try {
    await opts.probe({ id, host: deployment.host }, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    logs.push('error', (err as Error).message);
    throw new BuildError((err as Error).message);
  }
  logs.note(`==> Live at ${deps.urls.forHost(deployment.host)}`);
  await logs.end();
  signal.throwIfAborted();
  // markLive tells the edges (the routing signal), as every state change does.
  await markLive(deps, id, { deployDurationMs: Date.now() - deployStarted });
}
