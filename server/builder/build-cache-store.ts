import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { type TreeCounts, totalOf } from './link-tree.ts';

/** What is kept beside each cache folder; a folder without it is not a cache. */
const Meta = z.object({
  branch: z.string(),
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
  /** The branch whose build saved it. */
  branch: string;
  /** The key it was saved under: another than asked for is a partial hit. */
  key: string;
}

export type SaveResult = { saved: true; bytes: number; evicted: number } | { saved: false; bytes: number };

/**
 * Build caches on disk, one folder per project and branch: `<dir>/<projectId>/<branch id>/`
 * with its `.json` beside it. Under the artifacts directory, so workers that share artifacts
 * share caches. A project's caches are only ever read for that project's builds.
 */
export interface BuildCacheStore {
  /**
   * The cache of the first of `branches` saved under `key`; else the first of `branches` that has
   * one at all (an earlier lockfile's: its downloads still help); null when none has one.
   */
  find(projectId: string, branches: readonly string[], key: string): Promise<CacheEntry | null>;
  /**
   * Fills a new folder with `fill` and, when it holds at most `maxBytes`, makes it the cache of
   * this project and branch (the previous one goes), then evicts the project's oldest caches
   * beyond the cap.
   */
  save(
    projectId: string,
    branch: string,
    key: string,
    maxBytes: number,
    fill: (dir: string) => Promise<TreeCounts>,
  ): Promise<SaveResult>;
  /** Forgets a cache that could not be restored. */
  discard(projectId: string, branch: string): Promise<void>;
}

const branchId = (branch: string) => createHash('sha256').update(branch).digest('hex').slice(0, 24);
const safeProject = (projectId: string) => {
  if (!/^prj_[a-z0-9]+$/.test(projectId)) throw new Error(`Not a project id: ${projectId}`);
  return projectId;
};
/** Left by a save that did not finish (a crash): removed once surely abandoned. */
const STALE_MS = 60 * 60 * 1000;

export function createBuildCacheStore(dir: string, opts: { maxBytesPerProject: number }): BuildCacheStore {
  const projectDir = (projectId: string) => join(dir, safeProject(projectId));
  const paths = (projectId: string, branch: string) => {
    const base = join(projectDir(projectId), branchId(branch));
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

  /** Oldest first until the project's caches fit the cap; returns how many went. */
  async function evict(projectId: string): Promise<number> {
    const pdir = projectDir(projectId);
    const names = await readdir(pdir).catch(() => [] as string[]);
    const entries: (Meta & { base: string })[] = [];
    for (const name of names) {
      const at = join(pdir, name);
      if (name.endsWith('.json')) {
        const meta = await readMeta(at);
        if (meta) entries.push({ ...meta, base: at.slice(0, -'.json'.length) });
      } else if (/\.(tmp|old)$/.test(name)) {
        const age = await stat(at).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > STALE_MS) await rm(at, { recursive: true, force: true });
      }
    }
    entries.sort((a, b) => (a.savedAt < b.savedAt ? -1 : a.savedAt > b.savedAt ? 1 : 0));
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

  return {
    async find(projectId, branches, key) {
      const found: CacheEntry[] = [];
      for (const branch of branches) {
        const p = paths(projectId, branch);
        const meta = await readMeta(p.meta);
        if (!meta) continue;
        const isDir = await stat(p.tree).then(
          (s) => s.isDirectory(),
          () => false,
        );
        if (!isDir) {
          await remove(p.tree);
          continue;
        }
        found.push({ dir: p.tree, trees: meta.trees, bytes: meta.bytes, branch, key: meta.key });
      }
      return found.find((e) => e.key === key) ?? found[0] ?? null;
    },

    async save(projectId, branch, key, maxBytes, fill) {
      const p = paths(projectId, branch);
      await mkdir(projectDir(projectId), { recursive: true });
      const temp = scratch(p.tree, 'tmp');
      try {
        await mkdir(temp, { mode: 0o755 });
        const trees = await fill(temp);
        const { bytes } = totalOf(trees);
        if (bytes > maxBytes) return { saved: false, bytes };
        await remove(p.tree);
        await rename(temp, p.tree);
        const meta: Meta = { branch, key, trees, bytes, savedAt: new Date().toISOString() };
        await writeFile(`${p.meta}.tmp`, JSON.stringify(meta));
        await rename(`${p.meta}.tmp`, p.meta);
        return { saved: true, bytes, evicted: await evict(projectId) };
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
    },

    async discard(projectId, branch) {
      await remove(paths(projectId, branch).tree);
    },
  };
}
