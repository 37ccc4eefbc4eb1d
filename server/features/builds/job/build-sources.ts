import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildError } from '../../../platform/sandbox/build-error.ts';
import { buildDeployment, type BuildResult } from '../build-deployment.ts';
import type { BuildSpec, SourceFile } from '../../../platform/store/build-spec.ts';
import { repositoryRefusal, repositorySettings } from '../../github/index.ts';
import { repositoryAccess } from '../../github/roles.ts';
import { raceSignal } from '../../../core/race-signal.ts';
import { systemLookup } from '../../../core/ssrf.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { resolveBuildEnv, recordDetectedFramework } from '../../deployments/roles.ts';
import { sandboxShare } from '../../identity/roles.ts';
import { type DeploymentRuntime, parseRuntime } from '../../../platform/store/deployment-runtime.ts';
import { uploadStoreOf } from '../../uploads/index.ts';
import { materializeFiles } from '../../uploads/roles.ts';
import type { BuildAttempt, Built } from './build-context.ts';

/** A rollback or redeploy without a rebuild: the build of `sourceId`, as it is. */
export async function reuseBuild({ deps, deployment, logs }: BuildAttempt, sourceId: string): Promise<Built> {
  const source = await deps.db
    .selectFrom('deployments')
    .selectAll()
    .where('id', '=', sourceId)
    .executeTakeFirstOrThrow();
  if (!source.artifact_id) throw new BuildError(`Deployment ${source.id} has no build to reuse`);
  logs.note(
    `==> Reusing the build of ${source.id} (commit ${source.commit_hash?.slice(0, 7) ?? 'unknown'}): no rebuild`,
  );
  const runtime = parseRuntime(source.id, source.runtime) ?? { kind: 'static', spa: false };
  await deps.db
    .updateTable('deployments')
    .set({
      commit_hash: source.commit_hash,
      commit_message: source.commit_message,
      author: source.author,
      runtime: JSON.stringify(runtime),
      framework: source.framework,
    })
    .where('id', '=', deployment.id)
    .execute();
  return { artifactId: source.artifact_id, runtime };
}

/**
 * Uploaded files to serve as they are: no build, no tenant code, so no sandbox. Their hashes were
 * checked when they were received, so they are stored by the list without being read: only the
 * files no earlier deployment stored are copied (a folder of this deployment's own holds the copies).
 */
export async function storePrebuilt(
  { deps, opts, deployment, logs }: BuildAttempt,
  files: SourceFile[],
): Promise<Built> {
  const dir = join(deps.config.workspacesDir, deployment.id);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  logs.note(`==> Storing ${files.length} uploaded files, prebuilt: no build`);
  const uploads = uploadStoreOf(deps.config);
  const copyOf = async (sha256: string) => {
    const file = join(dir, sha256);
    return (await uploads.copyTo(sha256, file)) ? { file, move: true } : null;
  };
  const stored = await opts.artifacts
    .storeHashed(files, copyOf, {
      maxBytes: deps.config.maxOutputBytes,
      maxFiles: deps.config.maxOutputFiles,
    })
    .catch((err: unknown) => {
      if (err instanceof BuildError) logs.push('error', err.message);
      throw err;
    })
    .finally(() => rm(dir, { recursive: true, force: true }));
  const runtime: DeploymentRuntime = { kind: 'static', spa: false };
  await deps.db
    .updateTable('deployments')
    .set({ runtime: JSON.stringify(runtime) })
    .where('id', '=', deployment.id)
    .execute();
  return { artifactId: stored.artifactId, runtime };
}

/**
 * A build of the repository's commit or of uploaded sources, in the sandbox. The build cache's
 * save is left in `later` (with the workspace's removal), for after the deployment goes live.
 */
export async function buildFromSource(
  a: BuildAttempt,
  spec: BuildSpec,
  later: { saveCache?: () => Promise<void> },
): Promise<Built> {
  const { deps, opts, deployment, project, logs, signal } = a;
  const id = deployment.id;
  const files = spec.source.kind === 'upload' ? spec.source.files : null;
  const { repositoryUrl, unreachableHint } = files
    ? { repositoryUrl: project.repository_url, unreachableHint: undefined }
    : await repositoryOf(a);
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
          store: a.cacheStore,
          projectId: project.id,
          lanes: spec.cache,
          maxBytes: deps.config.buildCache.maxBytesPerProject,
          organization: await organizationCaches(deps, project.organization_id),
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
  later.saveCache = () =>
    (result.saveCache?.() ?? Promise.resolve()).finally(() =>
      rm(workspaceRoot, { recursive: true, force: true }),
    );
  return { artifactId: result.artifactId, runtime: await recordBuild(a, result) };
}

/** Records what the build made on the deployment: its commit, runtime and detected framework. */
async function recordBuild(
  { deps, deployment }: BuildAttempt,
  result: BuildResult,
): Promise<DeploymentRuntime> {
  const runtime: DeploymentRuntime = {
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
    .where('id', '=', deployment.id)
    .execute();
  await recordDetectedFramework(deps.db, deployment, result.framework);
  return runtime;
}

/** The repository to check out, once its URL passes the rules, with the App's access where it has it. */
async function repositoryOf(a: BuildAttempt): Promise<{ repositoryUrl: string; unreachableHint?: string }> {
  await checkRepository(a, a.project.repository_url);
  const access = await repositoryAccess(a.deps, a.project, (line) => a.logs.note(line)).catch(
    (err: unknown) => {
      if (err instanceof BuildError) a.logs.push('error', err.message);
      throw err;
    },
  );
  return { repositoryUrl: access.url, unreachableHint: access.unreachableHint };
}

/**
 * The repository URL rules again, in full: the API checked what it could without DNS, but
 * DNS answers and the server's settings change between the project's creation and its builds.
 */
async function checkRepository({ deps, opts, logs, signal }: BuildAttempt, url: string) {
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
 * saving a cache evicts the organization's oldest past it (features/builds/build-cache-store.ts).
 */
async function organizationCaches(deps: Deps, organizationId: string) {
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
