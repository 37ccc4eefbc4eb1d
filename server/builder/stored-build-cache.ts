import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { create as packTar, extract as unpackTar } from 'tar';
import { z } from 'zod';
import type { BlobStore } from '../storage/blob-store.ts';
import {
  type BuildCacheStore,
  type CacheEntry,
  type CollectedCaches,
  isProjectId,
  laneId,
  safeProject,
  TOUCH_EVERY_MS,
} from './build-cache-store.ts';
import { laneKind } from './cache-lanes.ts';
import { totalOf, type TreeCounts } from './link-tree.ts';

/**
 * This process's builds using each local copy right now (`<project>/<name>` to how many), and
 * the removals of copies under way, per local folder: every store opened on one folder (the
 * build job's, the monitoring run's) shares them.
 */
interface LocalCopies {
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

/** What is stored beside each cache's archive (`<name>.json`, written after it). */
const Meta = z.object({
  lane: z.string(),
  key: z.string(),
  trees: z.record(z.string(), z.object({ files: z.number(), bytes: z.number() })),
  bytes: z.number(),
  savedAt: z.string(),
});
type Meta = z.infer<typeof Meta>;

/** One saved cache as its keys name it: everything a choice needs, without reading it. */
interface Saved {
  projectId: string;
  /** `<kind>-<lane hash>`: the lane's folder. */
  folder: string;
  kind: string;
  /** `<time>-<bytes>-<key hash>-<random>`: sorts by the time it was saved. */
  name: string;
  savedAt: number;
  bytes: number;
  keyHash: string;
  /** The description's modified time: its save, or its latest restore (touch). */
  usedAt: Date;
}

const PREFIX = 'build-cache/';
/** An archive without its description this old was left by a save that did not finish. */
const ABANDONED_MS = 60 * 60 * 1000;
const NAME = /^(\d{15})-(\d+)-([0-9a-f]{16})-([0-9a-f]{12})$/;

const keyHash = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16);
const folderOf = (lane: string) => `${laneKind(lane) ?? 'other'}-${laneId(lane)}`;
const metaKey = (s: Pick<Saved, 'projectId' | 'folder' | 'name'>) =>
  `${PREFIX}${s.projectId}/${s.folder}/${s.name}.json`;
const archiveKey = (s: Pick<Saved, 'projectId' | 'folder' | 'name'>) =>
  `${PREFIX}${s.projectId}/${s.folder}/${s.name}.tar.gz`;
const byTime = (a: Saved, b: Saved) => a.savedAt - b.savedAt || (a.name < b.name ? -1 : 1);

/** The saved cache a description's key names, or null for any other key. */
function parseKey(key: string, modifiedAt: Date): Saved | null {
  const parts = key.slice(PREFIX.length).split('/');
  if (parts.length !== 3 || !parts[2]!.endsWith('.json')) return null;
  const [projectId, folder] = parts as [string, string];
  const name = parts[2]!.slice(0, -'.json'.length);
  const m = NAME.exec(name);
  if (!m || !isProjectId(projectId)) return null;
  return {
    projectId,
    folder,
    kind: folder.slice(0, folder.indexOf('-')),
    name,
    savedAt: Number(m[1]),
    bytes: Number(m[2]),
    keyHash: m[3]!,
    usedAt: modifiedAt,
  };
}

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
 * Build caches in a blob store (object storage), shared by every worker: each save is a new
 * archive (`build-cache/<project>/<kind>-<lane hash>/<name>.tar.gz`) and its description
 * (`<name>.json`), written after it, so a cache that can be found is whole; a lane's cache is its
 * newest description, and the older ones go. Names carry the time, size and key, so choosing
 * one, evicting and counting read only a listing. A worker restores by unpacking the archive
 * into its own disk once (`localDir`), aside then renamed, and its builds link from there as
 * from the local store. The lanes are the local store's (cache-lanes.ts): the folder is the
 * lane's own, and the description must name the lane asked for.
 */
export function createStoredBuildCacheStore(
  blobs: BlobStore,
  opts: StoredBuildCacheOptions,
): BuildCacheStore {
  const gzip = { level: opts.gzipLevel ?? 1 };
  const pending = new Map<string, Promise<CacheEntry | null>>();
  const localProject = (projectId: string) => join(opts.localDir, safeProject(projectId));
  const copies = localCopiesOf(opts.localDir);
  const hold = (id: string) => copies.held.set(id, (copies.held.get(id) ?? 0) + 1);
  const unhold = (id: string) => {
    const n = (copies.held.get(id) ?? 0) - 1;
    if (n > 0) copies.held.set(id, n);
    else copies.held.delete(id);
  };

  async function listSaved(prefix: string): Promise<{ saved: Saved[]; archives: Map<string, Date> }> {
    const saved: Saved[] = [];
    const archives = new Map<string, Date>();
    for await (const o of blobs.list(prefix)) {
      if (o.key.endsWith('.tar.gz')) archives.set(o.key, o.modifiedAt);
      else {
        const s = parseKey(o.key, o.modifiedAt);
        if (s) saved.push(s);
      }
    }
    return { saved: saved.sort(byTime), archives };
  }

  const listProject = async (projectId: string) =>
    (await listSaved(`${PREFIX}${safeProject(projectId)}/`)).saved;

  /** Description first: from then on it is not a cache, whatever is left. */
  async function removeSaved(s: Saved): Promise<void> {
    await blobs.delete(metaKey(s));
    await blobs.delete(archiveKey(s));
  }

  /** The newest cache of each lane folder, newest first. */
  function newestPerFolder(saved: Saved[]): Saved[] {
    const newest = new Map<string, Saved>();
    for (const s of saved) newest.set(s.folder, s);
    return [...newest.values()].sort(byTime).reverse();
  }

  /**
   * The cache on this machine's disk, unpacked from the store the first time (once however
   * many builds ask together); null when it is gone from the store, or names another lane.
   */
  async function materialize(s: Saved, lane: string | null): Promise<CacheEntry | null> {
    const id = `${s.projectId}/${s.name}`;
    // Held before anything is looked at, in the same turn as the check on a removal: a prune
    // either saw the hold and skips the copy, or had begun removing it, and the copy is then
    // fetched again once the removal is done.
    hold(id);
    let entry: CacheEntry | null = null;
    try {
      await copies.removing.get(id);
      let p = pending.get(id);
      if (!p) {
        p = unpack(s, lane).finally(() => pending.delete(id));
        pending.set(id, p);
      }
      entry = await p;
    } finally {
      if (!entry) unhold(id);
    }
    if (!entry) return null;
    let released = false;
    return {
      ...entry,
      release: () => {
        if (released) return;
        released = true;
        unhold(id);
      },
    };
  }

  async function unpack(s: Saved, lane: string | null): Promise<CacheEntry | null> {
    const dir = join(localProject(s.projectId), s.name);
    const localMeta = `${dir}.json`;
    let meta = await readMeta(localMeta);
    if (!meta) {
      const bytes = await blobs.read(metaKey(s));
      meta = bytes ? parseMeta(bytes.toString('utf8')) : null;
      if (!meta) return null;
      if (lane !== null ? meta.lane !== lane : laneKind(meta.lane) !== s.kind) return null;
      const body = await blobs.stream(archiveKey(s));
      if (!body) return null;
      await mkdir(localProject(s.projectId), { recursive: true });
      const temp = `${dir}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await mkdir(temp, { mode: 0o755 });
        await pipeline(body, createWriteStream(`${temp}.tar.gz`));
        // The owner is this process, whoever owned the files when they were packed.
        await unpackTar({ file: `${temp}.tar.gz`, cwd: temp, preserveOwner: false, strict: true });
        await rm(dir, { recursive: true, force: true });
        await rename(temp, dir);
      } finally {
        await rm(temp, { recursive: true, force: true });
        await rm(`${temp}.tar.gz`, { force: true });
      }
      await writeFile(`${localMeta}.tmp`, JSON.stringify(meta));
      await rename(`${localMeta}.tmp`, localMeta);
      // A new copy on this disk: the least recently used go if the copies are now over the bound.
      await pruneLocal();
    } else if (lane !== null ? meta.lane !== lane : laneKind(meta.lane) !== s.kind) {
      return null;
    }
    const now = new Date();
    await utimes(localMeta, now, now).catch(() => undefined);
    if (Date.now() - s.usedAt.getTime() > TOUCH_EVERY_MS) await blobs.touch(metaKey(s));
    return { dir, trees: meta.trees, bytes: meta.bytes, lane: meta.lane, key: meta.key, id: s.name };
  }

  /**
   * Keeps this machine's copies within `localMaxBytes`: the least recently used (the modified
   * time of the copy's `.json`, moved by each restore) are removed first, the description first
   * (from then on it is not a copy), and never one a build of this process holds: a build links
   * and copies from its copy until it ends, and its save takes the downloads from it. Leftovers of
   * an unpack or save that did not finish (a crash) go once surely abandoned.
   */
  function pruneLocal(): Promise<void> {
    // A copy that cannot be removed now is tried again by the next prune: a restore or a save
    // never fails for it.
    const run = copies.pruning.then(() => pruneLocalNow()).catch(() => undefined);
    copies.pruning = run;
    return run;
  }

  async function pruneLocalNow(): Promise<void> {
    const found: { id: string; base: string; bytes: number; usedAt: number }[] = [];
    for (const project of await readdir(opts.localDir).catch(() => [] as string[])) {
      if (!isProjectId(project)) continue;
      const pdir = join(opts.localDir, project);
      const names = await readdir(pdir).catch(() => [] as string[]);
      for (const name of names) {
        const at = join(pdir, name);
        const id = `${project}/${name.replace(/\.json$/, '')}`;
        if (name.endsWith('.json')) {
          const info = await stat(at).catch(() => null);
          const meta = info && (await readMeta(at));
          if (info && meta)
            found.push({ id, base: at.slice(0, -'.json'.length), bytes: meta.bytes, usedAt: info.mtimeMs });
          continue;
        }
        // A folder without its description, or a temporary file: left by a save or an unpack
        // that stopped (one under way holds its name, or is younger than an hour).
        if (names.includes(`${name}.json`) || copies.held.has(id)) continue;
        const age = await stat(at).then(
          (st) => Date.now() - st.mtimeMs,
          () => 0,
        );
        if (age > ABANDONED_MS) await rm(at, { recursive: true, force: true });
      }
    }
    const max = opts.localMaxBytes;
    if (max === undefined) return;
    let total = found.reduce((n, c) => n + c.bytes, 0);
    for (const c of found.sort((a, b) => a.usedAt - b.usedAt)) {
      if (total <= max) break;
      if (copies.held.has(c.id)) continue;
      const removal = (async () => {
        await rm(`${c.base}.json`, { force: true });
        await rm(c.base, { recursive: true, force: true });
      })();
      copies.removing.set(c.id, removal);
      try {
        await removal;
      } finally {
        copies.removing.delete(c.id);
      }
      total -= c.bytes;
    }
  }

  /** Oldest first until the project's caches fit the cap (never `keep`); returns how many went. */
  async function evict(projectId: string, keep: string): Promise<number> {
    const saved = await listProject(projectId);
    let total = saved.reduce((n, s) => n + s.bytes, 0);
    let evicted = 0;
    for (const s of saved) {
      if (total <= opts.maxBytesPerProject) break;
      if (s.name === keep) continue;
      await removeSaved(s);
      total -= s.bytes;
      evicted++;
    }
    return evicted;
  }

  return {
    async find(projectId, sources, key) {
      const newest = newestPerFolder(await listProject(projectId));
      const candidates: { s: Saved; lane: string | null }[] = [];
      for (const source of sources) {
        const found =
          'lane' in source
            ? newest.filter((s) => s.folder === folderOf(source.lane)).map((s) => ({ s, lane: source.lane }))
            : newest.filter((s) => s.kind === source.newestOf).map((s) => ({ s, lane: null }));
        for (const c of found) if (!candidates.some((x) => x.s.folder === c.s.folder)) candidates.push(c);
      }
      const wanted = keyHash(key);
      const ordered = [
        ...candidates.filter((c) => c.s.keyHash === wanted),
        ...candidates.filter((c) => c.s.keyHash !== wanted),
      ];
      for (const c of ordered) {
        const entry = await materialize(c.s, c.lane).catch(() => null);
        if (entry) return entry;
      }
      return null;
    },

    async save(projectId, lane, key, maxBytes, fill, organization) {
      const pdir = localProject(projectId);
      await mkdir(pdir, { recursive: true });
      const temp = join(pdir, `${randomBytes(6).toString('hex')}.tmp`);
      const archive = `${temp}.tar.gz`;
      try {
        await mkdir(temp, { mode: 0o755 });
        const trees: TreeCounts = await fill(temp);
        const { bytes } = totalOf(trees);
        if (bytes > maxBytes) return { saved: false, bytes };
        if (organization && bytes > organization.maxBytes)
          return { saved: false, bytes, over: 'organization' };
        const savedAt = Date.now();
        const s: Saved = {
          projectId,
          folder: folderOf(lane),
          kind: laneKind(lane) ?? 'other',
          name: `${String(savedAt).padStart(15, '0')}-${bytes}-${keyHash(key)}-${randomBytes(6).toString('hex')}`,
          savedAt,
          bytes,
          keyHash: keyHash(key),
          usedAt: new Date(savedAt),
        };
        // Hard links are kept as links (pnpm's store), symbolic links as links, modes exactly as
        // they are (not `portable`, which would give the owner write access to the read-only files).
        await packTar({ cwd: temp, gzip, file: archive }, await readdir(temp));
        await blobs.putIfAbsent(archiveKey(s), { file: archive });
        const meta: Meta = { lane, key, trees, bytes, savedAt: new Date(savedAt).toISOString() };
        await blobs.putIfAbsent(metaKey(s), { bytes: JSON.stringify(meta) });
        // This worker's next build of the lane starts from its own disk.
        const dir = join(pdir, s.name);
        const id = `${projectId}/${s.name}`;
        hold(id);
        try {
          await rename(temp, dir);
          await writeFile(`${dir}.json`, JSON.stringify(meta));
        } finally {
          unhold(id);
        }
        await pruneLocal();
        // The lane's older caches go: its newest is its cache.
        for (const old of await listProject(projectId)) {
          if (old.folder === s.folder && byTime(old, s) < 0) await removeSaved(old);
        }
        const evicted = await evict(projectId, s.name);
        if (!organization) return { saved: true, bytes, evicted };
        const all: Saved[] = [];
        for (const id of new Set(organization.projectIds)) {
          if (isProjectId(id)) all.push(...(await listProject(id)));
        }
        all.sort(byTime);
        let total = all.reduce((n, x) => n + x.bytes, 0);
        let quotaEvicted = 0;
        for (const old of all) {
          if (total <= organization.maxBytes) break;
          if (old.name === s.name) continue;
          await removeSaved(old);
          total -= old.bytes;
          quotaEvicted++;
        }
        return { saved: true, bytes, evicted, quotaEvicted };
      } finally {
        await rm(temp, { recursive: true, force: true });
        await rm(archive, { force: true });
      }
    },

    async discard(projectId, entry) {
      const saved = await listProject(projectId);
      const s = saved.find((x) => x.name === entry.id);
      if (s) await removeSaved(s);
      await rm(`${entry.dir}.json`, { force: true });
      await rm(entry.dir, { recursive: true, force: true });
    },

    async usage(projectIds) {
      let total = 0;
      for (const id of new Set(projectIds)) {
        if (isProjectId(id)) total += (await listProject(id)).reduce((n, s) => n + s.bytes, 0);
      }
      return total;
    },

    async collect({ liveProjectIds, unusedBefore }) {
      const collected: CollectedCaches = { caches: 0, bytes: 0 };
      const { saved, archives } = await listSaved(PREFIX);
      for (const s of saved) {
        if (liveProjectIds.has(s.projectId) && s.usedAt >= unusedBefore) {
          archives.delete(archiveKey(s));
          continue;
        }
        await removeSaved(s);
        archives.delete(archiveKey(s));
        collected.caches++;
        collected.bytes += s.bytes;
      }
      // Archives left without a description: a save that stopped half-way, or a removal.
      const abandoned = Date.now() - ABANDONED_MS;
      for (const [key, at] of archives) if (at.getTime() < abandoned) await blobs.delete(key);
      return collected;
    },
  };
}

async function readMeta(file: string): Promise<Meta | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  return text === null ? null : parseMeta(text);
}

function parseMeta(text: string): Meta | null {
  try {
    const parsed = Meta.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
