import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { delimiter, dirname, join, relative } from 'node:path';
import type { ArtifactStore } from './artifacts.ts';
import type { BuildSettings } from './build-spec.ts';
import { BuildCancelledError, BuildError, BuildTimeoutError } from './build-error.ts';
import { localRepositoryPath } from './checkout.ts';
import { describeDuration, describeElapsed } from '../lib/format.ts';
import type { Sandbox } from '../sandbox/index.ts';
import type { OutputBudget } from './run-command.ts';
import { readPackageJson } from './package-json.ts';
import { frameworkOutput } from './outputs/index.ts';
import { detectStage } from './stages/detect.ts';
import { sourceStage } from './stages/source.ts';
import { folderInside } from './stages/folders.ts';
import { installPlan } from './stages/install-plan.ts';
import { type PackagedOutput, packageOutput } from './stages/package-output.ts';
import { type BuildCacheOptions, cachedPaths, saveCache } from './build-cache.ts';
import { installStage } from './stages/install.ts';
import { createStageRunner } from './stages/run-stage.ts';

export type BuildLogType = 'build' | 'error';

export interface BuildDeploymentOptions {
  repositoryUrl: string;
  /**
   * Build these files instead of a checkout: `write(dir)` puts them in the (empty) source
   * directory and returns what it made, which the sandbox's user is then given.
   * `repositoryUrl`, `ref` and `commit` are not used.
   */
  files?: { count: number; write(dir: string): Promise<string[]> };
  /** What to advise when the repository cannot be read; default: check the URL and that it is public. */
  unreachableHint?: string;
  /** Branch name or full ref (`refs/pull/12/head`). */
  ref: string;
  /** Pinned commit (7 to 40 hex characters); default the head of `ref`. */
  commit?: string | null;
  /** The project's framework slug; detected from the repository when null. */
  framework?: string | null;
  /** The project's build settings; each null is detected. */
  settings?: BuildSettings;
  /** The framework the project's previous build was built as, to say when detection changed. */
  previousFramework?: { slug: string; deploymentId: string } | null;
  /** The project's environment variables for this target, decrypted. */
  env: Record<string, string>;
  /** Values masked as `***` in the log (the `encrypted` variables). */
  secrets: string[];
  /** A fresh directory is made (and always removed) under this one for each build. */
  workspaceRoot: string;
  artifacts: ArtifactStore;
  /** For the whole build: checkout, install and build (SLIPWAY_BUILD_TIMEOUT). */
  timeoutMs: number;
  maxOutputBytes: number;
  /** Default 100,000 files. */
  maxOutputFiles?: number;
  /** Every log line. The reason for a failure is logged as an `error` line before it is thrown. */
  log: (type: BuildLogType, line: string) => void;
  /** Bounds and paces the install's and the build's output before it becomes lines (the build log's limit). */
  logBudget?: OutputBudget;
  /** Aborting kills the running command and fails the build with BuildCancelledError. */
  signal?: AbortSignal;
  /** PATH the commands run with (node, npm, git); default the server's. */
  path?: string;
  /** Every command of the build (git, install, build) runs in it. */
  sandbox: Sandbox;
  /** The project's build cache; `'off'` when the deployment asked for none; absent: no cache. */
  cache?: BuildCacheOptions | 'off';
  /**
   * Leave saving the cache to the caller (`saveCache` in the result, which then also removes
   * the workspace), so the deployment can go live first.
   */
  deferCacheSave?: boolean;
  /** Told the commit as soon as it is checked out (before install and build). */
  onCheckedOut?(commit: {
    commitHash: string | null;
    commitMessage: string | null;
    author: string | null;
  }): Promise<void>;
}

const NO_SETTINGS: BuildSettings = {
  installCommand: null,
  buildCommand: null,
  outputDirectory: null,
  rootDirectory: null,
};

export interface BuildResult extends PackagedOutput {
  /** The checked-out commit; null for uploaded files. */
  commitHash: string | null;
  commitMessage: string | null;
  /** Commit author's e-mail. */
  author: string | null;
  /** Framework slug: the project's, or the detected one (store it on the project when it had none). */
  framework: string;
  /** Whether `framework` was detected (true) or the project's own setting (false). */
  frameworkDetected: boolean;
  durationMs: number;
  /** With `deferCacheSave`: saves the build cache, then removes the workspace. Never throws. */
  saveCache?: () => Promise<void>;
}

const DEFAULT_MAX_FILES = 100_000;
/** Set by Slipway: a project variable of these names is ignored, since the build needs them. */
const RESERVED = new Set(['PATH', 'HOME']);

const phase = (title: string) => `==> ${title}`;

/**
 * Builds one deployment: checks the commit out into a fresh workspace, detects the framework,
 * installs dependencies, runs the build and stores the output (for a `node` app, the whole
 * checkout without .git) as an artifact. The workspace is removed whatever happens. Failures
 * the user can fix are BuildErrors whose message says what to do.
 */
export async function buildDeployment(opts: BuildDeploymentOptions): Promise<BuildResult> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  const log = opts.log;
  const info = (line: string) => log('build', line);
  const timeoutMessage = `Build exceeded the ${describeDuration(opts.timeoutMs)} limit (SLIPWAY_BUILD_TIMEOUT).`;
  const remaining = () => {
    const left = deadline - Date.now();
    if (left <= 0) throw new BuildTimeoutError(timeoutMessage);
    return left;
  };

  const { sandbox } = opts;
  if (sandbox.unavailable) {
    log('error', sandbox.unavailable);
    throw new BuildError(sandbox.unavailable);
  }
  for (const line of sandbox.banner()) info(line);
  const settings = opts.settings ?? NO_SETTINGS;
  info(describeSettings(opts.framework ?? null, settings));
  // A file system of its own where the kernel can hold the disk limit, else a watched folder.
  const ws = await sandbox.disk.create(opts.workspaceRoot);
  const workspace = ws.dir;
  const src = join(workspace, 'src');
  const home = join(workspace, 'home');
  await mkdir(src)
    .then(() => mkdir(home))
    .then(() => sandbox.prepare([workspace, src, home]))
    .catch(async (err: unknown) => {
      await ws.remove();
      throw err;
    });
  // Reaching the disk limit ends the build, with one message whichever way it was found.
  const stop = new AbortController();
  let diskExceeded: string | null = null;
  // Once a deferred cache save holds the workspace, removing it is the save's to do.
  let handedOver = false;
  const handOver = (save: (() => Promise<void>) | null) =>
    (handedOver = Boolean(save && opts.deferCacheSave));
  // The cache restored from is the build's until it ends: its save takes the downloads from it.
  let releaseCache = () => {};
  const disk = ws.watch((message) => {
    diskExceeded = message;
    stop.abort();
  });
  const local = localRepositoryPath(opts.repositoryUrl);
  const localRepo = local && existsSync(local) ? local : null;
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const cancelled = (): never => {
    if (diskExceeded) throw new BuildError(diskExceeded);
    throw new BuildCancelledError('The build was cancelled.');
  };
  const basePath = [
    dirname(process.execPath),
    opts.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  ].join(delimiter);

  try {
    const commit = await sourceStage({
      ...(opts.files ? { files: opts.files } : {}),
      repositoryUrl: opts.repositoryUrl,
      ...(opts.unreachableHint ? { unreachableHint: opts.unreachableHint } : {}),
      ref: opts.ref,
      commit: opts.commit ?? null,
      src,
      sandbox,
      info,
      timeoutMs: remaining(),
      signal,
      path: basePath,
      cancelled,
    });
    // Recorded now, so a build that fails later still says which commit it was.
    if (!opts.files) await opts.onCheckedOut?.(commit);

    const app = settings.rootDirectory
      ? await folderInside(src, settings.rootDirectory, 'root directory')
      : src;
    const appPath = relative(src, app) || '.';
    const fw = await detectStage(app, appPath, {
      framework: opts.framework ?? null,
      previous: opts.previousFramework ?? null,
      info,
    });

    const frameworkOut = frameworkOutput(fw.slug);
    const pkg = await readPackageJson(app);
    const dependencies = Object.fromEntries(
      Object.entries({ ...pkg?.devDependencies, ...pkg?.dependencies }).map(([k, v]) => [k, String(v)]),
    );
    const at = { src, app, dependencies };

    const projectEnv = Object.fromEntries(Object.entries(opts.env).filter(([key]) => !RESERVED.has(key)));
    // The environment is built from nothing: the server's own variables (database URL,
    // encryption key) must never reach code from a repository.
    const binDirs = [...new Set([join(app, 'node_modules', '.bin'), join(src, 'node_modules', '.bin')])];
    const commandEnv = (extra: Record<string, string>) => ({
      ...extra,
      ...projectEnv,
      PATH: [...binDirs, basePath].join(delimiter),
      HOME: home,
      CI: projectEnv.CI ?? '1',
    });
    const run = createStageRunner({
      sandbox,
      ws,
      src,
      app,
      localRepo,
      secrets: opts.secrets,
      ...(opts.logBudget ? { budget: opts.logBudget } : {}),
      signal,
      remaining,
      timeoutMessage,
      cancelled,
      info,
    });

    const buildCommand = settings.buildCommand === null ? fw.buildCommand : settings.buildCommand || null;
    // No NODE_ENV=production for the install unless the project sets it: package managers would
    // then skip the devDependencies (bundlers, compilers) the build needs.
    const plan = await installPlan(
      fw,
      settings,
      { src, app, appPath },
      fw.kind === 'node' || buildCommand !== null,
    );
    const cacheAt = { workspace, paths: cachedPaths(workspace, src, app) };
    const installed = await installStage({
      plan,
      cache: opts.cache,
      cacheAt,
      appPath,
      own: (made) => sandbox.prepare(made),
      run,
      env: commandEnv({}),
      info,
    });
    const cacheKeyOf = installed.key;
    const restored = installed.restored;
    const entry = restored.entry;
    releaseCache = () => entry?.release?.();

    if (buildCommand) {
      const frameworkEnv = (await frameworkOut?.buildEnv?.(at)) ?? {};
      const said = frameworkOut?.describeBuildEnv?.(at);
      if (said) info(said);
      await run(
        'Building',
        ['sh', '-c', buildCommand],
        commandEnv({ NODE_ENV: 'production', ...frameworkEnv }),
      );
    } else {
      info(
        phase(
          settings.buildCommand === ''
            ? "No build: the project's build command is empty"
            : 'No build command: serving the files as they are',
        ),
      );
    }

    const cache = opts.cache;
    const save =
      cache && cache !== 'off' && cacheKeyOf
        ? () => saveCache(cache, cacheKeyOf, { ...cacheAt, restored }, info)
        : null;
    if (save && !opts.deferCacheSave) await save();

    const packaged = await packageOutput({
      fw,
      settings,
      at,
      output: frameworkOut,
      artifacts: opts.artifacts,
      limits: { maxBytes: opts.maxOutputBytes, maxFiles: opts.maxOutputFiles ?? DEFAULT_MAX_FILES },
      info,
      phase,
    });
    const durationMs = Date.now() - started;
    info(phase(`Build completed in ${describeElapsed(durationMs)}`));

    return {
      commitHash: commit.commitHash,
      commitMessage: commit.commitMessage,
      author: commit.author,
      framework: fw.slug,
      frameworkDetected: fw.source === 'detected',
      ...packaged,
      durationMs,
      ...(handOver(save)
        ? {
            saveCache: () =>
              save!().finally(() => {
                releaseCache();
                return ws.remove();
              }),
          }
        : {}),
    };
  } catch (err) {
    if (err instanceof BuildTimeoutError) {
      log('error', timeoutMessage);
      throw new BuildTimeoutError(timeoutMessage);
    }
    if (err instanceof BuildError) log('error', err.message);
    throw err;
  } finally {
    disk.stop();
    if (!handedOver) {
      releaseCache();
      await ws.remove();
    }
  }
}

/** The first build log line about settings: what the project sets, the rest detected. */
function describeSettings(framework: string | null, s: BuildSettings): string {
  const set = [
    framework ? `framework ${framework}` : null,
    s.rootDirectory ? `root directory ${s.rootDirectory}` : null,
    s.installCommand !== null
      ? `install command ${s.installCommand ? `"${s.installCommand}"` : '(none)'}`
      : null,
    s.buildCommand !== null ? `build command ${s.buildCommand ? `"${s.buildCommand}"` : '(none)'}` : null,
    s.outputDirectory ? `output directory ${s.outputDirectory}` : null,
  ].filter((x): x is string => x !== null);
  return set.length
    ? `Project settings: ${set.join(', ')}; the rest is detected`
    : 'Project settings: none, everything is detected';
}
