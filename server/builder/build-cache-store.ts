import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** What is kept beside each archive; the archive is trusted only when its size matches. */
const Meta = z.object({ branch: z.string(), key: z.string(), bytes: z.number(), savedAt: z.string() });
type Meta = z.infer<typeof Meta>;

export interface CacheEntry {
  /** The archive (a gzipped tar of paths relative to the build's workspace). */
  file: string;
  bytes: number;
  /** The branch whose build saved it. */
  branch: string;
  /** The key it was saved under: another than asked for is a partial hit. */
  key: string;
}

/**
 * Build caches on disk, one archive per project and branch: `<dir>/<projectId>/<branch id>.tgz`
 * with its `.json`. Under the artifacts directory, so workers that share artifacts share caches.
 * A project's caches are only ever read for that project's builds.
 */
export interface BuildCacheStore {
  /**
   * The cache of the first of `branches` saved under `key`; else the first of `branches` that has
   * one at all (an earlier lockfile's: its downloads still help); null when none has one.
   */
  find(projectId: string, branches: readonly string[], key: string): Promise<CacheEntry | null>;
  /** Keeps `archive` (moved in) as the cache of this project and branch, then evicts to the cap. */
  save(
    projectId: string,
    branch: string,
    key: string,
    archive: string,
  ): Promise<{ bytes: number; evicted: number }>;
  /** Forgets a cache that could not be restored. */
  discard(projectId: string, branch: string): Promise<void>;
}

const branchId = (branch: string) => createHash('sha256').update(branch).digest('hex').slice(0, 24);
const safeProject = (projectId: string) => {
  if (!/^prj_[a-z0-9]+$/.test(projectId)) throw new Error(`Not a project id: ${projectId}`);
  return projectId;
};

export function createBuildCacheStore(dir: string, opts: { maxBytesPerProject: number }): BuildCacheStore {
  const projectDir = (projectId: string) => join(dir, safeProject(projectId));
  const paths = (projectId: string, branch: string) => {
    const base = join(projectDir(projectId), branchId(branch));
    return { archive: `${base}.tgz`, meta: `${base}.json` };
  };

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

  async function discard(projectId: string, branch: string) {
    const p = paths(projectId, branch);
    await rm(p.meta, { force: true });
    await rm(p.archive, { force: true });
  }

  /** Oldest first until the project's caches fit the cap; returns how many went. */
  async function evict(projectId: string): Promise<number> {
    const pdir = projectDir(projectId);
    const names = (await readdir(pdir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
    const entries: (Meta & { base: string })[] = [];
    for (const name of names) {
      const meta = await readMeta(join(pdir, name));
      if (meta) entries.push({ ...meta, base: join(pdir, name.slice(0, -'.json'.length)) });
    }
    entries.sort((a, b) => (a.savedAt < b.savedAt ? -1 : a.savedAt > b.savedAt ? 1 : 0));
    let total = entries.reduce((n, e) => n + e.bytes, 0);
    let evicted = 0;
    while (total > opts.maxBytesPerProject && entries.length > 1) {
      const oldest = entries.shift()!;
      await rm(`${oldest.base}.json`, { force: true });
      await rm(`${oldest.base}.tgz`, { force: true });
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
        const size = await stat(p.archive).then(
          (s) => s.size,
          () => -1,
        );
        // A crash between writing the archive and its description leaves them apart: not a cache.
        if (size !== meta.bytes) {
          await discard(projectId, branch);
          continue;
        }
        found.push({ file: p.archive, bytes: size, branch, key: meta.key });
      }
      return found.find((e) => e.key === key) ?? found[0] ?? null;
    },

    async save(projectId, branch, key, archive) {
      const p = paths(projectId, branch);
      await mkdir(projectDir(projectId), { recursive: true });
      const bytes = (await stat(archive)).size;
      // The description goes first, the archive last: a reader trusts the pair only when sizes agree.
      const temp = `${p.archive}.${randomBytes(6).toString('hex')}.tmp`;
      await rename(archive, temp).catch(async () => {
        await copyFile(archive, temp);
        await rm(archive, { force: true });
      });
      const meta: Meta = { branch, key, bytes, savedAt: new Date().toISOString() };
      await writeFile(`${p.meta}.tmp`, JSON.stringify(meta));
      await rename(`${p.meta}.tmp`, p.meta);
      await rename(temp, p.archive);
      return { bytes, evicted: await evict(projectId) };
    },

    discard,
  };
}
