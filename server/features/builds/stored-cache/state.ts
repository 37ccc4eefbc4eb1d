import { join } from 'node:path';
import type { BlobStore } from '../../../platform/storage/blob-store.ts';
import { type CacheEntry, safeProject } from '../build-cache-store.ts';

export interface StoredBuildCacheOptions {
  maxBytesPerProject: number;
  /** This machine's copies of the caches its builds used (`<dir>/<projectId>/<name>/`). */
  localDir: string;
  /**
   * The bytes of those copies kept (SLIPWAY_BUILD_CACHE_LOCAL_MAX): past it, the least recently
   * used go first, never one a build of this process is using. Unbounded when absent.
   */
  localMaxBytes?: number;
  /** Gzip level of the archives: 1 (the default) trades size for the build's time. */
  gzipLevel?: number;
}

/**
 * This process's builds using each local copy right now (`<project>/<name>` to how many), and
 * the removals of copies under way, per local folder: every store opened on one folder (the
 * build job's, the monitoring run's) shares them.
 */
export interface LocalCopies {
  held: Map<string, number>;
  removing: Map<string, Promise<void>>;
  /** The prune running, if any: prunes take turns, so none counts a copy another is removing. */
  pruning: Promise<void>;
}
const localCopiesByDir = new Map<string, LocalCopies>();
function localCopiesOf(dir: string): LocalCopies {
  let c = localCopiesByDir.get(dir);
  if (!c) {
    c = { held: new Map(), removing: new Map(), pruning: Promise.resolve() };
    localCopiesByDir.set(dir, c);
  }
  return c;
}

/**
 * What one stored build cache store keeps (createStoredBuildCacheStore makes it once), passed
 * to the functions that find, save, restore and prune rather than closed over.
 */
export interface StoredCacheState {
  blobs: BlobStore;
  opts: StoredBuildCacheOptions;
  gzip: { level: number };
  /** Unpacks under way, by `<project>/<name>`: builds asking together share one. */
  pending: Map<string, Promise<CacheEntry | null>>;
  copies: LocalCopies;
}

export function createStoredCacheState(blobs: BlobStore, opts: StoredBuildCacheOptions): StoredCacheState {
  return {
    blobs,
    opts,
    gzip: { level: opts.gzipLevel ?? 1 },
    pending: new Map(),
    copies: localCopiesOf(opts.localDir),
  };
}

/** This machine's folder of a project's copies. */
export const localProject = (st: StoredCacheState, projectId: string) =>
  join(st.opts.localDir, safeProject(projectId));

export function hold(st: StoredCacheState, id: string): void {
  st.copies.held.set(id, (st.copies.held.get(id) ?? 0) + 1);
}

export function unhold(st: StoredCacheState, id: string): void {
  const n = (st.copies.held.get(id) ?? 0) - 1;
  if (n > 0) st.copies.held.set(id, n);
  else st.copies.held.delete(id);
}
