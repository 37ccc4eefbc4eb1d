import type { BuildCacheStore } from './cache-store-interface.ts';
import { collectCaches } from './local-cache/collect.ts';
import { findCache } from './local-cache/find.ts';
import { describedAll, remove } from './local-cache/listing.ts';
import { saveCache } from './local-cache/save.ts';
import { type LocalCacheState, paths } from './local-cache/state.ts';

export type {
  BuildCacheStore,
  CacheEntry,
  CollectedCaches,
  OrganizationCacheQuota,
  SaveResult,
} from './cache-store-interface.ts';
export { isProjectId, laneId, safeProject, TOUCH_EVERY_MS } from './cache-store-interface.ts';

/**
 * The build caches on this machine's disk (BuildCacheStore says how they are laid out). The
 * pieces are in `local-cache/`, each taking the one LocalCacheState made here.
 */
export function createBuildCacheStore(dir: string, opts: { maxBytesPerProject: number }): BuildCacheStore {
  const st: LocalCacheState = { dir, maxBytesPerProject: opts.maxBytesPerProject };
  return {
    find: (projectId, sources, key) => findCache(st, projectId, sources, key),
    save: (projectId, lane, key, maxBytes, fill, organization) =>
      saveCache(st, projectId, lane, key, maxBytes, fill, organization),
    discard: async (projectId, entry) => remove(paths(st, projectId, entry.lane).tree),
    usage: async (projectIds) => (await describedAll(st, projectIds)).reduce((n, e) => n + e.bytes, 0),
    collect: (collectOpts) => collectCaches(st, collectOpts),
  };
}
