import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Selectable } from 'kysely';
import { ApiError } from '../../api/errors.ts';
import type { ArtifactStore } from '../builder/artifacts.ts';
import { BuildCancelledError, BuildError, BuildTimeoutError, hideHostPaths } from '../builder/build-error.ts';
import type { BuildOutcome } from '../ops-metrics/ops-metrics.ts';
import { buildDeployment } from '../builder/build-deployment.ts';
import { repositoryRefusal, repositorySettings } from '../builder/repository-policy.ts';
import { type DeploymentRuntime, parseRuntime } from '../store/deployment-runtime.ts';
import { raceSignal } from '../lib/race-signal.ts';
import {
  markBuilding,
  markDeploying,
  markFailed,
  markLive,
} from '../services/deployments/deployment-state.ts';
import { BUILD_JOB } from '../services/deployments/queue-deployment.ts';
import type { Sandbox } from '../sandbox/index.ts';
import type { Deps } from '../services/deps.ts';
import { buildCacheStoreOf } from '../builder/open-build-cache.ts';
import { resolveBuildEnv } from '../services/env/resolve-build-env.ts';
import { sandboxShare } from '../services/organizations/sandbox-share.ts';
import type { DeploymentsTable } from '../store/schema.ts';
import { systemLookup, type LookupAll } from '../lib/ssrf.ts';
import { createLogBuffer, type LogBuffer } from './log-buffer.ts';
import { repositoryAccess } from './repository-access.ts';
import { type BuildSpec, decodeBuildSpec } from '../builder/build-spec.ts';
import { materializeFiles } from '../uploads/materialize.ts';
import { uploadStoreOf } from '../uploads/upload-store.ts';
import type { JobHandler } from './worker.ts';
import type { Fairness } from '../queue/fair-claim.ts';
import { recordDetectedFramework } from '../services/projects/detected-framework.ts';
import { decodeJson } from '../lib/json-column.ts';
import { z } from 'zod';

/** A build job's payload (queue-deployment.ts writes it). */
const BuildPayload = z.object({ deploymentId: z.string() });

export interface BuildJobOptions {
  artifacts: ArtifactStore;
  /** The health request through the edge; resolves when the edge serves the deployment. */
  probe(deployment: { id: string; host: string }, signal: AbortSignal): Promise<void>;
  /** Resolves repository hosts before the checkout; default `dns.lookup(host, { all: true })`. */
  lookup?: LookupAll;
  /** Where the checkout, install and build run. */
  sandbox: Sandbox;
}

type DeploymentRow = Selectable<DeploymentsTable>;

/** What the deployment builds, as decided when it was queued. */
function specOf(d: DeploymentRow): BuildSpec {
  try {
    return decodeBuildSpec(d.id, d.build_spec);
  } catch (err) {
    // Building it again would not read it any better.
    throw new BuildError(`${(err as Error).message}. Start a new deployment.`);
  }
}

const FINAL = new Set(['live', 'failed']);

/**
 * The `deployment.build` job: checkout, build and store an artifact (or reuse the build a
 * rollback points at), then bring the deployment up through the edge and make it live. A
 * failure the user can fix fails the deployment at once; anything else is retried by the queue.
 */
export function createBuildJob(deps: Deps, opts: BuildJobOptions): JobHandler {
  const cacheStore = buildCacheStoreOf(deps.config);
  return {
    kind: BUILD_JOB,
    concurrency: deps.config.buildConcurrency,
    // A build can take minutes: the lease is renewed while it runs, so a short one is fine.
    leaseMs: deps.config.jobLeaseMs,
    retryDelayMs: () => 2000,
    fairness: buildsPerOrganization(deps.config.plans),

    async handle(job, signal) {
      const { deploymentId } = decodeJson(BuildPayload, job.payload, `Job ${job.id}'s payload`);
      const deployment = await deps.db
        .selectFrom('deployments')
        .selectAll()
        .where('id', '=', deploymentId)
        .executeTakeFirst();
      if (!deployment || FINAL.has(deployment.status)) return;
      const logs = await createLogBuffer(deps, deploymentId, { limitBytes: deps.config.buildLogLimitBytes });
      const began = deps.clock.now().getTime();
      const ended = (outcome: BuildOutcome) =>
        deps.ops.buildEnded(outcome, Math.max(0, deps.clock.now().getTime() - began) / 1000);
      try {
        ended(await run(deployment, logs, signal));
      } catch (err) {
        ended(outcomeOf(err, signal));
        if (err instanceof BuildError && err.limit) deps.ops.limitHit(err.limit, 'build');
        if (err instanceof BuildTimeoutError) deps.ops.limitHit('time', 'build');
        if (signal.aborted) {
          // Shutdown or a lost lease: the job goes back to the queue (or is another worker's
          // already), so the deployment is not this attempt's to fail.
          logs.note('==> Interrupted: this worker stopped; the build will run again');
          throw err;
        }
        if (err instanceof BuildError) {
          // The reason is in the error log already; the build log ends saying it failed, and why.
          logs.note(failedLine(deploymentId, err.message));
          await logs.end();
          await failQuietly(deploymentId, err.message);
          return;
        }
        await logs.end();
        // The state machine's CONFLICTs mean someone else moved the deployment on.
        if (err instanceof ApiError) return;
        logs.push('error', `Internal error: ${shown(deploymentId, (err as Error).message)}`);
        await logs.flush();
        throw err;
      } finally {
        await logs.end();
      }
    },

    async onExhausted(job, reason) {
      const { deploymentId } = decodeJson(BuildPayload, job.payload, `Job ${job.id}'s payload`);
      const message = `The build could not complete: ${reason}`;
      const logs = await createLogBuffer(deps, deploymentId, { limitBytes: deps.config.buildLogLimitBytes });
      logs.note(failedLine(deploymentId, message));
      await logs.end();
      await failQuietly(deploymentId, message);
    },
  };

  /** The last line of a failed deployment's log. */
  function failedLine(deploymentId: string, message: string) {
    return `==> Deployment failed: ${shown(deploymentId, message)}`;
  }

  /** What tenants read of an error: no paths of the service's own directories. */
  function shown(deploymentId: string, message: string): string {
    return hideHostPaths(message, [
      [join(deps.config.workspacesDir, deploymentId), '<workspace>'],
      [deps.config.workspacesDir, '<workspaces>'],
      [deps.config.artifactsDir, '<artifacts>'],
      [deps.config.dataDir, '<data>'],
    ]);
  }

  async function failQuietly(deploymentId: string, message: string) {
    try {
      await markFailed(deps, deploymentId, shown(deploymentId, message));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  /**
   * The repository URL rules again, in full: the API checked what it could without DNS, but
   * DNS answers and the server's settings change between the project's creation and its builds.
   */
  async function checkRepository(url: string, logs: LogBuffer, signal: AbortSignal) {
    const lookup = opts.lookup ?? systemLookup;
    const refusal = await repositoryRefusal(url, repositorySettings(deps.config), {
      lookup: (host) => raceSignal(lookup(host), signal),
    });
    signal.throwIfAborted();
    if (!refusal) return;
    const message = `The repository URL is refused: ${refusal}.`;
    logs.push('error', message);
    throw new BuildError(message);
  }

  /**
   * The quota of the caches of all the organization's projects together (its plan's `caches`):
   * saving a cache evicts the organization's oldest past it (builder/build-cache-store.ts).
   */
  async function organizationCaches(organizationId: string) {
    const org = await deps.db
      .selectFrom('organizations')
      .select('plan')
      .where('id', '=', organizationId)
      .executeTakeFirstOrThrow();
    const projects = await deps.db
      .selectFrom('projects')
      .select('id')
      .where('organization_id', '=', organizationId)
      .execute();
    return {
      plan: org.plan,
      maxBytes: deps.config.plans[org.plan].cacheBytes,
      projectIds: projects.map((p) => p.id),
    };
  }

  /** Builds the deployment; says whether it went live or failed (an error is thrown instead when it can). */
  async function run(
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
      logs.note(failedLine(id, `The project is ${project.status}`));
      await logs.flush();
      await failQuietly(id, `The project is ${project.status}`);
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

    const started = Date.now();
    await logs.flush();
    await markBuilding(deps, id);
    let artifactId: string;
    let runtime: DeploymentRuntime;
    // The build cache is saved once the deployment is live (or failed to start): not on its way.
    let saveCache: (() => Promise<void>) | undefined;
    try {
      await buildAndGoLive();
      return 'live';
    } finally {
      if (saveCache) {
        await saveCache().catch(() => {});
        await logs.flush();
      }
    }

    async function buildAndGoLive() {
      if (deployment.source_deployment_id) {
        const source = await deps.db
          .selectFrom('deployments')
          .selectAll()
          .where('id', '=', deployment.source_deployment_id)
          .executeTakeFirstOrThrow();
        if (!source.artifact_id) throw new BuildError(`Deployment ${source.id} has no build to reuse`);
        logs.note(
          `==> Reusing the build of ${source.id} (commit ${source.commit_hash?.slice(0, 7) ?? 'unknown'}): no rebuild`,
        );
        artifactId = source.artifact_id;
        runtime = parseRuntime(source.id, source.runtime) ?? { kind: 'static', spa: false };
        await deps.db
          .updateTable('deployments')
          .set({
            commit_hash: source.commit_hash,
            commit_message: source.commit_message,
            author: source.author,
            runtime: JSON.stringify(runtime),
            framework: source.framework,
          })
          .where('id', '=', id)
          .execute();
        return goLive();
      }
      const spec = specOf(deployment);
      if (spec.source.kind === 'prebuilt') {
        // Files to serve as they are: no build, no tenant code, so no sandbox.
        const files = spec.source.files;
        const dir = join(deps.config.workspacesDir, id);
        await rm(dir, { recursive: true, force: true });
        await mkdir(dir, { recursive: true });
        logs.note(`==> Storing ${files.length} uploaded files, prebuilt: no build`);
        const stored = await materializeFiles(uploadStoreOf(deps.config), files, dir)
          .then(() =>
            opts.artifacts.storeDirectory(dir, {
              maxBytes: deps.config.maxOutputBytes,
              maxFiles: deps.config.maxOutputFiles,
            }),
          )
          .catch((err: unknown) => {
            if (err instanceof BuildError) logs.push('error', err.message);
            throw err;
          })
          .finally(() => rm(dir, { recursive: true, force: true }));
        artifactId = stored.artifactId;
        runtime = { kind: 'static', spa: false };
        await deps.db
          .updateTable('deployments')
          .set({ runtime: JSON.stringify(runtime) })
          .where('id', '=', id)
          .execute();
      } else {
        const files = spec.source.kind === 'upload' ? spec.source.files : null;
        let repositoryUrl = project.repository_url;
        let unreachableHint: string | undefined;
        if (!files) {
          await checkRepository(project.repository_url, logs, signal);
          const access = await repositoryAccess(deps, project, (line) => logs.note(line)).catch(
            (err: unknown) => {
              if (err instanceof BuildError) logs.push('error', err.message);
              throw err;
            },
          );
          repositoryUrl = access.url;
          unreachableHint = access.unreachableHint;
        }
        const env = await resolveBuildEnv(deps, project.id, spec.target);
        // One directory per deployment: a retry clears what a worker that died left behind.
        const workspaceRoot = join(deps.config.workspacesDir, id);
        // Unmounted first when that worker left its workspace's file system mounted.
        await opts.sandbox.disk.clear(workspaceRoot);
        const result = await buildDeployment({
          repositoryUrl,
          ...(unreachableHint ? { unreachableHint } : {}),
          ...(files
            ? {
                files: {
                  count: files.length,
                  write: (dir: string) => materializeFiles(uploadStoreOf(deps.config), files, dir),
                },
              }
            : {}),
          ref: spec.source.kind === 'git' ? spec.source.ref : deployment.branch,
          commit: spec.source.kind === 'git' ? spec.source.commit : null,
          framework: spec.framework,
          settings: spec.settings,
          previousFramework: await previousFramework(deps, project.id, id),
          cache: spec.cache
            ? {
                store: cacheStore,
                projectId: project.id,
                lanes: spec.cache,
                maxBytes: deps.config.buildCache.maxBytesPerProject,
                organization: await organizationCaches(project.organization_id),
              }
            : 'off',
          env: env.vars,
          secrets: env.secrets,
          workspaceRoot,
          artifacts: opts.artifacts,
          timeoutMs: deps.config.buildTimeoutMs,
          maxOutputBytes: deps.config.maxOutputBytes,
          maxOutputFiles: deps.config.maxOutputFiles,
          log: (type, line) => logs.push(type, line),
          logBudget: logs.budget,
          signal,
          // Checkout, install and build share the organization's plan's memory and CPU share.
          sandbox: opts.sandbox.withShare(await sandboxShare(deps, project.id, 'build')),
          onCheckedOut: async (commit) => {
            await deps.db
              .updateTable('deployments')
              .set({
                commit_hash: commit.commitHash,
                commit_message: commit.commitMessage,
                author: commit.author,
              })
              .where('id', '=', id)
              .execute();
          },
          deferCacheSave: true,
        }).catch(async (err: unknown) => {
          await rm(workspaceRoot, { recursive: true, force: true });
          throw err;
        });
        saveCache = () =>
          (result.saveCache?.() ?? Promise.resolve()).finally(() =>
            rm(workspaceRoot, { recursive: true, force: true }),
          );
        artifactId = result.artifactId;
        runtime = {
          kind: result.kind,
          spa: result.spa,
          ...(result.startCommand ? { startCommand: result.startCommand } : {}),
          ...(result.assetsArtifactId ? { assetsArtifactId: result.assetsArtifactId } : {}),
          ...(result.writable ? { writable: result.writable } : {}),
          ...(result.env ? { env: result.env } : {}),
        };
        await deps.db
          .updateTable('deployments')
          .set({
            // Uploaded files keep the commit they were labelled with.
            commit_hash: result.commitHash ?? deployment.commit_hash,
            commit_message: result.commitMessage,
            author: result.author,
            runtime: JSON.stringify(runtime),
            // What this build detected stays with it: the project's framework is the user's setting.
            framework: result.framework,
          })
          .where('id', '=', id)
          .execute();
        await recordDetectedFramework(deps.db, deployment, result.framework);
      }
      await goLive();
    }

    /** Brings the stored build up through the edge and makes the deployment live. */
    async function goLive() {
      await logs.flush();
      signal.throwIfAborted();
      await markDeploying(deps, id, { buildDurationMs: Date.now() - started, artifactId });

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
  }
}

/** How a build attempt that threw ended, for the operator's metrics. */
function outcomeOf(err: unknown, signal: AbortSignal): BuildOutcome {
  if (signal.aborted) return 'interrupted';
  if (err instanceof BuildCancelledError) return 'cancelled';
  if (err instanceof BuildTimeoutError) return 'timed_out';
  if (err instanceof BuildError) return 'failed';
  // The state machine's CONFLICT: someone else (a cancel) moved the deployment on.
  if (err instanceof ApiError) return 'cancelled';
  return 'error';
}

/** The framework of the project's latest earlier build, to say when detection changed. */
async function previousFramework(deps: Deps, projectId: string, exceptId: string) {
  const row = await deps.db
    .selectFrom('deployments')
    .select(['id', 'framework'])
    .where('project_id', '=', projectId)
    .where('id', '!=', exceptId)
    .where('framework', 'is not', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.framework ? { slug: row.framework, deploymentId: row.id } : null;
}

/**
 * Builds take turns by organization, each organization within its plan's `builds` limit
 * (docs/operating.md#plan-limits), counted across every worker process.
 */
export function buildsPerOrganization(plans: Deps['config']['plans']): Fairness {
  return {
    async limits(db, keys) {
      const orgs = await db
        .selectFrom('organizations')
        .select(['id', 'plan'])
        .where('id', 'in', keys)
        .execute();
      return new Map(orgs.map((o) => [o.id, plans[o.plan].builds]));
    },
  };
}
