import { delimiter, join, relative } from 'node:path';
import type { DetectedFramework } from '../detect-framework.ts';
import { frameworkOutput, type AppAt, type FrameworkOutput } from '../outputs/index.ts';
import { readPackageJson } from '../package-json.ts';
import { detectStage } from '../stages/detect.ts';
import { folderInside } from '../stages/folders.ts';
import { type Commit, sourceStage } from '../stages/source.ts';
import { cancelled, remaining, type BuildContext } from './context.ts';

/** Set by Slipway: a project variable of these names is ignored, since the build needs them. */
const RESERVED = new Set(['PATH', 'HOME']);

/** The app to build: where it is in the checkout, its framework, and the environment its commands get. */
export interface App {
  app: string;
  appPath: string;
  fw: DetectedFramework;
  frameworkOut: FrameworkOutput | null;
  at: AppAt;
  commandEnv: (extra: Record<string, string>) => Record<string, string>;
}

/** The first stage: the uploaded files or a checkout of the commit, told the caller at once. */
export async function checkoutSource(ctx: BuildContext): Promise<Commit> {
  const { opts } = ctx;
  const commit = await sourceStage({
    ...(opts.files ? { files: opts.files } : {}),
    repositoryUrl: opts.repositoryUrl,
    ...(opts.unreachableHint ? { unreachableHint: opts.unreachableHint } : {}),
    ref: opts.ref,
    commit: opts.commit ?? null,
    src: ctx.src,
    sandbox: ctx.sandbox,
    info: ctx.info,
    timeoutMs: remaining(ctx),
    signal: ctx.signal,
    path: ctx.basePath,
    cancelled: () => cancelled(ctx),
  });
  // Recorded now, so a build that fails later still says which commit it was.
  if (!opts.files) await opts.onCheckedOut?.(commit);
  return commit;
}

/** Finds the app (the root directory), detects its framework and reads its dependencies. */
export async function findApp(ctx: BuildContext): Promise<App> {
  const { opts, src, settings } = ctx;
  const app = settings.rootDirectory
    ? await folderInside(src, settings.rootDirectory, 'root directory')
    : src;
  const appPath = relative(src, app) || '.';
  const fw = await detectStage(app, appPath, {
    framework: opts.framework ?? null,
    previous: opts.previousFramework ?? null,
    info: ctx.info,
  });
  const frameworkOut = frameworkOutput(fw.slug);
  const pkg = await readPackageJson(app);
  const dependencies = Object.fromEntries(
    Object.entries({ ...pkg?.devDependencies, ...pkg?.dependencies }).map(([k, v]) => [k, String(v)]),
  );
  return {
    app,
    appPath,
    fw,
    frameworkOut,
    at: { src, app, dependencies },
    commandEnv: commandEnvOf(ctx, app),
  };
}

/**
 * The environment is built from nothing: the server's own variables (database URL, encryption
 * key) must never reach code from a repository.
 */
function commandEnvOf(ctx: BuildContext, app: string) {
  const projectEnv = Object.fromEntries(Object.entries(ctx.opts.env).filter(([key]) => !RESERVED.has(key)));
  const binDirs = [...new Set([join(app, 'node_modules', '.bin'), join(ctx.src, 'node_modules', '.bin')])];
  return (extra: Record<string, string>) => ({
    ...extra,
    ...projectEnv,
    PATH: [...binDirs, ctx.basePath].join(delimiter),
    HOME: ctx.home,
    CI: projectEnv.CI ?? '1',
  });
}
