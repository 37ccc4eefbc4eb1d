import type { BlobStore } from '../../platform/storage/blob-store.ts';
import type { BuildCacheStore } from './build-cache-store.ts';
import { cacheUsage, collectCaches, discardCache } from './stored-cache/collect.ts';
import { findCache } from './stored-cache/find.ts';
import { saveCache } from './stored-cache/save.ts';
import { createStoredCacheState, type StoredBuildCacheOptions } from './stored-cache/state.ts';

export type { StoredBuildCacheOptions } from './stored-cache/state.ts';

/**
 * Build caches in a blob store (object storage), shared by every worker: each save is a new
 * archive (`build-cache/<project>/<kind>-<lane hash>/<name>.tar.gz`) and its description
 * (`<name>.json`), written after it, so a cache that can be found is whole; a lane's cache is its
 * newest description, and the older ones go. Names carry the time, size and key, so choosing
 * one, evicting and counting read only a listing. A worker restores by unpacking the archive
 * into its own disk once (`localDir`), aside then renamed, and its builds link from there as
 * from the local store. The lanes are the local store's (cache-lanes.ts): the folder is the
 * lane's own, and the description must name the lane asked for. The pieces are in
 * `stored-cache/`, each taking the one StoredCacheState made here.
 */
export function createStoredBuildCacheStore(
  blobs: BlobStore,
  opts: StoredBuildCacheOptions,
): BuildCacheStore {
  const st = createStoredCacheState(blobs, opts);
  return {
    find: (projectId, sources, key) => findCache(st, projectId, sources, key),
    save: (projectId, lane, key, maxBytes, fill, organization) =>
      saveCache(st, projectId, lane, key, maxBytes, fill, organization),
    discard: (projectId, entry) => discardCache(st, projectId, entry),
    usage: (projectIds) => cacheUsage(st, projectIds),
    collect: (collectOpts) => collectCaches(st, collectOpts),
  };
}
