import type { Config } from '../../platform/config.ts';
import { blobStoreOf } from '../../platform/storage/open-blob-store.ts';
import { type BuildCacheStore, createBuildCacheStore } from './build-cache-store.ts';
import { createStoredBuildCacheStore } from './stored-build-cache.ts';

/**
 * The service's build caches: in the bucket SLIPWAY_OBJECT_STORAGE names (each worker unpacking
 * what its builds use into its own `buildCache.dir`), else in `buildCache.dir` itself (under the
 * artifacts directory, shared by the workers that share it).
 */
export function buildCacheStoreOf(
  config: Pick<Config, 'artifactsDir' | 'objectStorage' | 'buildCache'>,
): BuildCacheStore {
  if (!config.objectStorage) return createBuildCacheStore(config.buildCache.dir, config.buildCache);
  return createStoredBuildCacheStore(blobStoreOf(config), {
    maxBytesPerProject: config.buildCache.maxBytesPerProject,
    localDir: config.buildCache.dir,
    localMaxBytes: config.buildCache.localMaxBytes,
  });
}
