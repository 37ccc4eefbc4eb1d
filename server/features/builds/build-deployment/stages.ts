import { describeElapsed } from '../../../core/format.ts';
import { cachedPaths, saveCache } from '../build-cache.ts';
import { installStage } from '../stages/install.ts';
import { installPlan } from '../stages/install-plan.ts';
import { packageOutput } from '../stages/package-output.ts';
import { createStageRunner } from '../stages/run-stage.ts';
import type { Commit } from '../stages/source.ts';
import type { App } from './app.ts';
import { cancelled, remaining, type BuildContext } from './context.ts';
import type { BuildResult } from './types.ts';

const DEFAULT_MAX_FILES = 100_000;

export const phase = (title: string) => `==> ${title}`;

type StageRunner = ReturnType<typeof createStageRunner>;

/** Runs the build's commands (install, build) in the sandbox, in the app's folder. */
export function stageRunner(ctx: BuildContext, a: App): StageRunner {
  return createStageRunner({
    sandbox: ctx.sandbox,
    ws: ctx.ws,
    src: ctx.src,
    app: a.app,
    localRepo: ctx.localRepo,
    secrets: ctx.opts.secrets,
    ...(ctx.opts.logBudget ? { budget: ctx.opts.logBudget } : {}),
    signal: ctx.signal,
    remaining: () => remaining(ctx),
    timeoutMessage: ctx.timeoutMessage,
    cancelled: () => cancelled(ctx),
    info: ctx.info,
  });
}

/**
 * Restores the cache and installs, then runs the build command (or says why there is none).
 * Returns how to save the cache, or null when there is nothing to save.
 */
export async function installAndBuild(
  ctx: BuildContext,
  a: App,
  run: StageRunner,
): Promise<(() => Promise<void>) | null> {
  const { settings, src, workspace } = ctx;
  const { fw, app, appPath } = a;
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
    cache: ctx.opts.cache,
    cacheAt,
    appPath,
    own: (made) => ctx.sandbox.prepare(made),
    run,
    env: a.commandEnv({}),
    info: ctx.info,
  });
  const cacheKeyOf = installed.key;
  const restored = installed.restored;
  const entry = restored.entry;
  ctx.releaseCache = () => entry?.release?.();
  await runBuildCommand(ctx, a, run, buildCommand);
  const cache = ctx.opts.cache;
  return cache && cache !== 'off' && cacheKeyOf
    ? () => saveCache(cache, cacheKeyOf, { ...cacheAt, restored }, ctx.info)
    : null;
}

async function runBuildCommand(ctx: BuildContext, a: App, run: StageRunner, buildCommand: string | null) {
  if (buildCommand) {
    const frameworkEnv = (await a.frameworkOut?.buildEnv?.(a.at)) ?? {};
    const said = a.frameworkOut?.describeBuildEnv?.(a.at);
    if (said) ctx.info(said);
    await run(
      'Building',
      ['sh', '-c', buildCommand],
      a.commandEnv({ NODE_ENV: 'production', ...frameworkEnv }),
    );
  } else {
    ctx.info(
      phase(
        ctx.settings.buildCommand === ''
          ? "No build: the project's build command is empty"
          : 'No build command: serving the files as they are',
      ),
    );
  }
}

/**
 * Saves the cache (unless the caller saves it later), stores the output as an artifact and says
 * what was built. With a deferred save, the workspace is handed over to it.
 */
export async function finishBuild(
  ctx: BuildContext,
  a: App,
  commit: Commit,
  save: (() => Promise<void>) | null,
): Promise<BuildResult> {
  const { opts } = ctx;
  if (save && !opts.deferCacheSave) await save();
  const packaged = await packageOutput({
    fw: a.fw,
    settings: ctx.settings,
    at: a.at,
    output: a.frameworkOut,
    artifacts: opts.artifacts,
    limits: { maxBytes: opts.maxOutputBytes, maxFiles: opts.maxOutputFiles ?? DEFAULT_MAX_FILES },
    info: ctx.info,
    phase,
  });
  const durationMs = Date.now() - ctx.started;
  ctx.info(phase(`Build completed in ${describeElapsed(durationMs)}`));
  ctx.handedOver = Boolean(save && opts.deferCacheSave);
  return {
    commitHash: commit.commitHash,
    commitMessage: commit.commitMessage,
    author: commit.author,
    framework: a.fw.slug,
    frameworkDetected: a.fw.source === 'detected',
    ...packaged,
    durationMs,
    ...(ctx.handedOver
      ? {
          saveCache: () =>
            save!().finally(() => {
              ctx.releaseCache();
              return ctx.ws.remove();
            }),
        }
      : {}),
  };
}
