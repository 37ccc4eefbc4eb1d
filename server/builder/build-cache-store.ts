import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { type CacheSource, type LaneKind, laneKind } from './cache-lanes.ts';
import { type TreeCounts, totalOf } from './link-tree.ts';

/** What is kept beside each cache folder; a folder without it is not a cache. */
const Meta = z.object({
  /** The lane it was saved under (cache-lanes.ts). Caches from before lanes have `branch`: never restored. */
  lane: z.string().optional(),
  branch: z.string().optional(),
  key: z.string(),
  /** Each saved path's files and bytes. */
  trees: z.record(z.string(), z.object({ files: z.number(), bytes: z.number() })),
  bytes: z.number(),
  savedAt: z.string(),
});
type Meta = z.infer<typeof Meta>;

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
/** Left by a save that did not finish (a crash): removed once surely abandoned. */
const STALE_MS = 60 * 60 * 1000;

/** Moves a cache description's time to now, at most once per TOUCH_EVERY_MS. */
async function markUsed(meta: string): Promise<void> {
  const at = await stat(meta).then(
    (s) => s.mtimeMs,
    () => null,
  );
  if (at === null || Date.now() - at < TOUCH_EVERY_MS) return;
  const now = new Date();
  await utimes(meta, now, now).catch(() => undefined);
}

export function createBuildCacheStore(dir: string, opts: { maxBytesPerProject: number }): BuildCacheStore {
  const projectDir = (projectId: string) => join(dir, safeProject(projectId));
  const paths = (projectId: string, lane: string) => {
    const base = join(projectDir(projectId), laneId(lane));
    return { tree: base, meta: `${base}.json` };
  };
  const scratch = (base: string, kind: 'tmp' | 'old') => `${base}.${randomBytes(6).toString('hex')}.${kind}`;

  async function readMeta(file: string): Promise<Meta | null> {
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text === null) return null;
    try {
      const parsed = Meta.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /** The description goes first: from then on the folder is not a cache, whatever is left. */
  async function remove(base: string) {
    await rm(`${base}.json`, { force: true });
    const old = scratch(base, 'old');
    if (
      await rename(base, old).then(
        () => true,
        () => false,
      )
    )
      await rm(old, { recursive: true, force: true });
  }

  /** The project's caches by their descriptions, oldest first. */
  async function described(projectId: string): Promise<(Meta & { base: string })[]> {
    const pdir = projectDir(projectId);
    const names = await readdir(pdir).catch(() => [] as string[]);
    const entries: (Meta & { base: string })[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const meta = await readMeta(join(pdir, name));
      if (meta) entries.push({ ...meta, base: join(pdir, name.slice(0, -'.json'.length)) });
    }
    return entries.sort((a, b) => (a.savedAt < b.savedAt ? -1 : a.savedAt > b.savedAt ? 1 : 0));
  }

  /** The lanes of a kind that have a cache, newest first. */
  async function newestOf(projectId: string, kind: LaneKind): Promise<string[]> {
    return (await described(projectId))
      .flatMap((e) => (e.lane && laneKind(e.lane) === kind ? [e.lane] : []))
      .reverse();
  }

  /** Oldest first until the project's caches fit the cap; returns how many went. */
  async function evict(projectId: string): Promise<number> {
    const pdir = projectDir(projectId);
    for (const name of await readdir(pdir).catch(() => [] as string[])) {
      if (!/\.(tmp|old)$/.test(name)) continue;
      const at = join(pdir, name);
      const age = await stat(at).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_MS) await rm(at, { recursive: true, force: true });
    }
    const entries = await described(projectId);
    let total = entries.reduce((n, e) => n + e.bytes, 0);
    let evicted = 0;
    while (total > opts.maxBytesPerProject && entries.length > 1) {
      const oldest = entries.shift()!;
      await remove(oldest.base);
      total -= oldest.bytes;
      evicted++;
    }
    return evicted;
  }

  /** The caches of these projects, oldest first. */
  async function describedAll(projectIds: readonly string[]): Promise<(Meta & { base: string })[]> {
    const entries: (Meta & { base: string })[] = [];
    for (const id of new Set(projectIds)) {
      if (isProjectId(id)) entries.push(...(await described(id)));
    }
    return entries.sort((a, b) => (a.savedAt < b.savedAt ? -1 : a.savedAt > b.savedAt ? 1 : 0));
  }

  /**
   * Oldest first, across the organization's projects, until their caches fit its quota; `keep`
   * (the cache just saved) never goes. Returns how many went.
   */
  async function evictForOrganization(quota: OrganizationCacheQuota, keep: string): Promise<number> {
    const entries = await describedAll(quota.projectIds);
    let total = entries.reduce((n, e) => n + e.bytes, 0);
    let evicted = 0;
    for (const oldest of entries) {
      if (total <= quota.maxBytes) break;
      if (oldest.base === keep) continue;
      await remove(oldest.base);
      total -= oldest.bytes;
      evicted++;
    }
    return evicted;
  }

  return {
    async find(projectId, sources, key) {
      const found: CacheEntry[] = [];
      for (const source of sources) {
        const lanes = 'lane' in source ? [source.lane] : await newestOf(projectId, source.newestOf);
        for (const lane of lanes) {
          if (found.some((e) => e.lane === lane)) continue;
          const p = paths(projectId, lane);
          const meta = await readMeta(p.meta);
          // A description must name the lane asked for: its folder is found by the lane's hash.
          if (!meta || meta.lane !== lane) continue;
          const isDir = await stat(p.tree).then(
            (s) => s.isDirectory(),
            () => false,
          );
          if (!isDir) {
            await remove(p.tree);
            continue;
          }
          found.push({ dir: p.tree, trees: meta.trees, bytes: meta.bytes, lane, key: meta.key });
        }
      }
      const chosen = found.find((e) => e.key === key) ?? found[0] ?? null;
      if (chosen) await markUsed(`${chosen.dir}.json`);
      return chosen;
    },

    async save(projectId, lane, key, maxBytes, fill, organization) {
      const p = paths(projectId, lane);
      await mkdir(projectDir(projectId), { recursive: true });
      const temp = scratch(p.tree, 'tmp');
      try {
        await mkdir(temp, { mode: 0o755 });
        const trees = await fill(temp);
        const { bytes } = totalOf(trees);
        if (bytes > maxBytes) return { saved: false, bytes };
        if (organization && bytes > organization.maxBytes)
          return { saved: false, bytes, over: 'organization' };
        await remove(p.tree);
        await rename(temp, p.tree);
        const meta: Meta = { lane, key, trees, bytes, savedAt: new Date().toISOString() };
        await writeFile(`${p.meta}.tmp`, JSON.stringify(meta));
        await rename(`${p.meta}.tmp`, p.meta);
        const evicted = await evict(projectId);
        if (!organization) return { saved: true, bytes, evicted };
        return {
          saved: true,
          bytes,
          evicted,
          quotaEvicted: await evictForOrganization(organization, p.tree),
        };
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
    },

    async discard(projectId, entry) {
      await remove(paths(projectId, entry.lane).tree);
    },

    async usage(projectIds) {
      return (await describedAll(projectIds)).reduce((n, e) => n + e.bytes, 0);
    },

    async collect({ liveProjectIds, unusedBefore }) {
      const collected = { caches: 0, bytes: 0 };
      for (const projectId of (await readdir(dir).catch(() => [] as string[])).filter(isProjectId)) {
        const entries = await described(projectId);
        const live = liveProjectIds.has(projectId);
        for (const e of entries) {
          // Its description's time: written by the save, moved by each restore (markUsed).
          const usedAt = await stat(`${e.base}.json`).then(
            (s) => s.mtime,
            () => new Date(0),
          );
          if (live && usedAt >= unusedBefore) continue;
          await remove(e.base);
          collected.caches++;
          collected.bytes += e.bytes;
        }
        if (!live) await rm(projectDir(projectId), { recursive: true, force: true });
      }
      return collected;
    },
  };
}
