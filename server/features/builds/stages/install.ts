import { join } from 'node:path';
import { isDir } from '../../../core/file-kind.ts';
import {
  type BuildCacheOptions,
  type CachedPaths,
  cacheKey,
  type Restored,
  restoreCache,
} from '../build-cache.ts';
import type { InstallPlan } from './install-plan.ts';
import type { StageRunner } from './run-stage.ts';

export interface InstallStageOptions {
  plan: InstallPlan;
  /** The project's build cache; `'off'` when the deployment asked for none; absent: no cache. */
  cache: BuildCacheOptions | 'off' | undefined;
  cacheAt: { workspace: string; paths: CachedPaths };
  appPath: string;
  /** Gives what the cache's restore made to the sandbox's user. */
  own: (made: string[]) => Promise<void>;
  run: StageRunner;
  env: Record<string, string>;
  info: (line: string) => void;
}

/**
 * Restores the build cache, then installs the dependencies, unless the cache brought back
 * `node_modules` for the same lockfile. Says under which key the cache is to be saved.
 */
export async function installStage(
  o: InstallStageOptions,
): Promise<{ key: string | null; restored: Restored }> {
  const { plan, info } = o;
  let key: string | null = null;
  let restored: Restored = { outcome: 'miss', entry: null };
  if (o.cache === 'off') info('Build cache: off for this deployment (cache: false)');
  else if (o.cache && 'argv' in plan) {
    key = await cacheKey(plan.cwd, plan.lockfile, plan.argv.join(' '), o.appPath);
    restored = await restoreCache(o.cache, key, o.cacheAt, o.own, info);
  }
  if (!('argv' in plan)) info(`==> ${plan.skip}`);
  else if (restored.outcome === 'hit' && plan.lockfile && (await isDir(join(plan.cwd, 'node_modules')))) {
    info(`==> Skipping install: node_modules restored from the build cache (${plan.lockfile} unchanged)`);
  } else {
    await o.run('Installing dependencies', plan.argv, o.env, plan.cwd);
  }
  return { key, restored };
}
