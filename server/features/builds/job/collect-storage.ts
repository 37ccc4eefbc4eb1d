import { createArtifactStore } from '../artifacts.ts';
import type { BuildCacheStore, CollectedCaches } from '../build-cache-store.ts';
import { buildCacheStoreOf } from '../open-build-cache.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { collectArtifacts, type CollectedArtifacts } from './collect-artifacts.ts';
import { blobStoreOf } from '../../../platform/storage/open-blob-store.ts';

/** The monitoring run collects storage at most this often per process: it lists the store. */
export const STORAGE_COLLECTION_EVERY_MS = 60 * 60 * 1000;
/**
 * ...and looks for blobs no manifest lists at most this often: that lists every blob and reads
 * every live manifest.
 */
export const UNLISTED_BLOBS_EVERY_MS = 24 * 60 * 60 * 1000;

/** When each configuration's process last looked for unlisted blobs. */
const lastUnlisted = new WeakMap<object, number>();

export interface CollectedStorage {
  caches: CollectedCaches;
  artifacts: CollectedArtifacts;
}

/**
 * Removes from the blob store (the artifacts directory or the bucket) what nothing needs any
 * more: build caches of deleted projects and those unused for SLIPWAY_BUILD_CACHE_TTL, and the
 * artifacts of projects deleted longer than SLIPWAY_ARTIFACT_RETENTION ago, and (`unlisted`, by
 * default at most once per UNLISTED_BLOBS_EVERY_MS per process) blobs no manifest lists
 * (collect-artifacts.ts says how shared blobs and builds under way are kept safe). Expired
 * uploads are removed by cleanUploads.
 */
export async function collectStorage(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  caches: BuildCacheStore = buildCacheStoreOf(deps.config),
  opts: { unlisted?: boolean } = {},
): Promise<CollectedStorage> {
  const live = await deps.db.selectFrom('projects').select('id').where('deleted_at', 'is', null).execute();
  const unusedBefore = new Date(deps.clock.now().getTime() - deps.config.buildCache.ttlMs);
  const cached = await caches.collect({ liveProjectIds: new Set(live.map((p) => p.id)), unusedBefore });
  const now = deps.clock.now().getTime();
  const last = lastUnlisted.get(deps.config);
  const unlisted = opts.unlisted ?? (last === undefined || now - last >= UNLISTED_BLOBS_EVERY_MS);
  if (unlisted) lastUnlisted.set(deps.config, now);
  const artifacts = await collectArtifacts(deps, createArtifactStore(blobStoreOf(deps.config)), { unlisted });
  return { caches: cached, artifacts };
}

const lastRun = new WeakMap<object, number>();

/** collectStorage from the monitoring run: at most once per STORAGE_COLLECTION_EVERY_MS per process. */
export async function collectStorageNow(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'log'>,
): Promise<CollectedStorage | null> {
  const now = deps.clock.now().getTime();
  const last = lastRun.get(deps.config);
  if (last !== undefined && now - last < STORAGE_COLLECTION_EVERY_MS) return null;
  lastRun.set(deps.config, now);
  const done = await collectStorage(deps);
  const { caches, artifacts } = done;
  if (caches.caches || artifacts.manifests || artifacts.condemned || artifacts.blobs) {
    deps.log.info({ caches, artifacts }, 'storage collected');
  }
  return done;
}
