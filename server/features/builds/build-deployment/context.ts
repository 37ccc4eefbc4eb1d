import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { describeDuration } from '../../../core/format.ts';
import type { Sandbox } from '../../../platform/sandbox/index.ts';
import type { Workspace } from '../../../platform/sandbox/workspace-disk.ts';
import { BuildCancelledError, BuildError, BuildTimeoutError } from '../../../platform/sandbox/build-error.ts';
import type { BuildSettings } from '../../../platform/store/build-spec.ts';
import { localRepositoryPath } from '../checkout.ts';
import { describeSettings } from './describe-settings.ts';
import type { BuildDeploymentOptions, BuildLogType } from './types.ts';

const NO_SETTINGS: BuildSettings = {
  installCommand: null,
  buildCommand: null,
  outputDirectory: null,
  rootDirectory: null,
};

/**
 * What one build keeps from start to end (openBuild makes it, closeBuild ends it), passed to
 * the functions of its stages rather than closed over.
 */
export interface BuildContext {
  opts: BuildDeploymentOptions;
  started: number;
  deadline: number;
  log: (type: BuildLogType, line: string) => void;
  info: (line: string) => void;
  timeoutMessage: string;
  sandbox: Sandbox;
  settings: BuildSettings;
  ws: Workspace;
  workspace: string;
  src: string;
  home: string;
  /** Aborted when the disk limit is reached: it ends the build. */
  stop: AbortController;
  /** Reaching the disk limit ends the build, with one message whichever way it was found. */
  diskExceeded: string | null;
  /** Once a deferred cache save holds the workspace, removing it is the save's to do. */
  handedOver: boolean;
  /** The cache restored from is the build's until it ends: its save takes the downloads from it. */
  releaseCache: () => void;
  disk: { stop(): void };
  localRepo: string | null;
  /** The caller's signal and `stop` together. */
  signal: AbortSignal;
  /** PATH the commands run with, before the app's own bin folders. */
  basePath: string;
}

/** Says the sandbox and the settings, then makes the build's workspace and starts watching its disk. */
export async function openBuild(opts: BuildDeploymentOptions): Promise<BuildContext> {
  const started = Date.now();
  const log = opts.log;
  const info = (line: string) => log('build', line);
  const timeoutMessage = `Build exceeded the ${describeDuration(opts.timeoutMs)} limit (SLIPWAY_BUILD_TIMEOUT).`;
  const { sandbox } = opts;
  if (sandbox.unavailable) {
    log('error', sandbox.unavailable);
    throw new BuildError(sandbox.unavailable);
  }
  for (const line of sandbox.banner()) info(line);
  const settings = opts.settings ?? NO_SETTINGS;
  info(describeSettings(opts.framework ?? null, settings));
  const { ws, src, home } = await makeWorkspace(sandbox, opts.workspaceRoot);
  const stop = new AbortController();
  const local = localRepositoryPath(opts.repositoryUrl);
  const ctx: BuildContext = {
    opts,
    started,
    deadline: started + opts.timeoutMs,
    log,
    info,
    timeoutMessage,
    sandbox,
    settings,
    ws,
    workspace: ws.dir,
    src,
    home,
    stop,
    diskExceeded: null,
    handedOver: false,
    releaseCache: () => {},
    disk: { stop: () => {} },
    localRepo: local && existsSync(local) ? local : null,
    signal: opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal,
    basePath: [
      dirname(process.execPath),
      opts.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    ].join(delimiter),
  };
  ctx.disk = ws.watch((message) => {
    ctx.diskExceeded = message;
    stop.abort();
  });
  return ctx;
}

/** A file system of its own where the kernel can hold the disk limit, else a watched folder. */
async function makeWorkspace(sandbox: Sandbox, root: string) {
  const ws = await sandbox.disk.create(root);
  const src = join(ws.dir, 'src');
  const home = join(ws.dir, 'home');
  await mkdir(src)
    .then(() => mkdir(home))
    .then(() => sandbox.prepare([ws.dir, src, home]))
    .catch(async (err: unknown) => {
      await ws.remove();
      throw err;
    });
  return { ws, src, home };
}

/** The build's time left; throws once it is up. */
export function remaining(ctx: BuildContext): number {
  const left = ctx.deadline - Date.now();
  if (left <= 0) throw new BuildTimeoutError(ctx.timeoutMessage);
  return left;
}

/** Throws the error of a build stopped from outside: its disk full, or cancelled. */
export function cancelled(ctx: BuildContext): never {
  if (ctx.diskExceeded) throw new BuildError(ctx.diskExceeded);
  throw new BuildCancelledError('The build was cancelled.');
}

/** Logs why the build failed, when the user can fix it; returns what to throw. */
export function failed(ctx: BuildContext, err: unknown): unknown {
  if (err instanceof BuildTimeoutError) {
    ctx.log('error', ctx.timeoutMessage);
    return new BuildTimeoutError(ctx.timeoutMessage);
  }
  if (err instanceof BuildError) ctx.log('error', err.message);
  return err;
}

/** Stops watching the disk and removes the workspace, unless a deferred cache save holds it. */
export async function closeBuild(ctx: BuildContext): Promise<void> {
  ctx.disk.stop();
  if (!ctx.handedOver) {
    ctx.releaseCache();
    await ctx.ws.remove();
  }
}
