import { checkoutSource, findApp } from './build-deployment/app.ts';
import { closeBuild, failed, openBuild } from './build-deployment/context.ts';
import { finishBuild, installAndBuild, stageRunner } from './build-deployment/stages.ts';
import type { BuildDeploymentOptions, BuildResult } from './build-deployment/types.ts';

export type { BuildDeploymentOptions, BuildLogType, BuildResult } from './build-deployment/types.ts';

/**
 * Builds one deployment: checks the commit out into a fresh workspace, detects the framework,
 * installs dependencies, runs the build and stores the output (for a `node` app, the whole
 * checkout without .git) as an artifact. The workspace is removed whatever happens. Failures
 * the user can fix are BuildErrors whose message says what to do. The stages are in
 * `build-deployment/`, each taking the one BuildContext made by openBuild.
 */
export async function buildDeployment(opts: BuildDeploymentOptions): Promise<BuildResult> {
  const ctx = await openBuild(opts);
  try {
    const commit = await checkoutSource(ctx);
    const app = await findApp(ctx);
    const run = stageRunner(ctx, app);
    const save = await installAndBuild(ctx, app, run);
    return await finishBuild(ctx, app, commit, save);
  } catch (err) {
    throw failed(ctx, err);
  } finally {
    await closeBuild(ctx);
  }
}
