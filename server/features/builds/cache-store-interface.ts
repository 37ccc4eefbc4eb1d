import { createHash } from 'node:crypto';
import type { CacheSource } from '../../platform/store/cache-lanes.ts';
import type { TreeCounts } from './link-tree.ts';

export interface CacheEntry {
  /** The cache's folder: paths relative to a build's workspace, files read-only. */
  dir: string;
  /** Each saved path's files and bytes: a restore that finds others found a damaged cache. */
  trees: TreeCounts;
  bytes: number;
  /** The lane it was saved under (cache-lanes.ts). */
  lane: string;
  /** The key it was saved under: another than asked for is a partial hit. */
  key: string;
  /** Which saved cache this is, where a lane's caches have names of their own (object storage). */
  id?: string;
  /**
   * Says the build is done with `dir` (object storage: this machine's copy may be pruned from
   * then on). Called once, when the build ends, however it ends; absent where nothing is held.
   */
  release?: () => void;
}

/** What a collection removed: caches of deleted projects and caches unused too long. */
export interface CollectedCaches {
  caches: number;
  bytes: number;
}

/**
 * `evicted`: the project's older caches removed for its own cap; `quotaEvicted` (with an
 * organization quota): caches of any of the organization's projects removed for its quota.
 * Not saved: over the project's cap, or (`over: 'organization'`) over the organization's quota alone.
 */
export type SaveResult =
  | { saved: true; bytes: number; evicted: number; quotaEvicted?: number }
  | { saved: false; bytes: number; over?: 'organization' };

/** The caches of every project of an organization together stay within `maxBytes` (its plan's `caches`). */
export interface OrganizationCacheQuota {
  /** Every project of the organization, deleted ones too (their caches still take disk). */
  projectIds: readonly string[];
  maxBytes: number;
}

/**
 * Build caches on disk, one folder per project and lane: `<dir>/<projectId>/<lane id>/` with
 * its `.json` beside it. Under the artifacts directory, so workers that share artifacts share
 * caches. A project's caches are only ever read for that project's builds, and only from the
 * lanes a build names (cache-lanes.ts says which a build may).
 */
export interface BuildCacheStore {
  /**
   * The first cache of `sources`, in order, saved under `key`; else the first found at all (an
   * earlier lockfile's: its downloads still help); null when none has one.
   */
  find(projectId: string, sources: readonly CacheSource[], key: string): Promise<CacheEntry | null>;
  /**
   * Fills a new folder with `fill` and, when it holds at most `maxBytes`, makes it the cache of
   * this project and lane (the previous one goes), then evicts the project's oldest caches
   * beyond the cap. With `organization`, then evicts the organization's oldest caches, of any of
   * its projects (never the one just saved), until all of them fit its quota.
   */
  save(
    projectId: string,
    lane: string,
    key: string,
    maxBytes: number,
    fill: (dir: string) => Promise<TreeCounts>,
    organization?: OrganizationCacheQuota,
  ): Promise<SaveResult>;
  /** Forgets a cache that could not be restored (that one: a newer one of its lane stays). */
  discard(projectId: string, entry: CacheEntry): Promise<void>;
  /** The bytes of the caches of these projects together (an organization's, against its quota). */
  usage(projectIds: readonly string[]): Promise<number>;
  /**
   * Removes the caches of every project not in `liveProjectIds` (deleted ones) and the caches
   * neither saved nor restored since `unusedBefore` (SLIPWAY_BUILD_CACHE_TTL).
   */
  collect(opts: { liveProjectIds: ReadonlySet<string>; unusedBefore: Date }): Promise<CollectedCaches>;
}

/** A restore marks its cache used at most this often (a write per restore would be waste). */
export const TOUCH_EVERY_MS = 60 * 60 * 1000;

export const isProjectId = (id: string) => /^prj_[a-z0-9]+$/.test(id);

export const laneId = (lane: string) => createHash('sha256').update(lane).digest('hex').slice(0, 24);
export const safeProject = (projectId: string) => {
  if (!isProjectId(projectId)) throw new Error(`Not a project id: ${projectId}`);
  return projectId;
};
