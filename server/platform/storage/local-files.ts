import { createWriteStream, rmSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LRUCache } from 'lru-cache';
import { randomString } from '../../core/ids.ts';
import { checkKey, type BlobStore } from './blob-store.ts';

/**
 * A blob store's objects as files on this machine, for the edge: in place for a local directory,
 * else fetched once into a bounded cache on disk.
 */
export interface LocalFiles {
  store: BlobStore;
  /** The local file of a key, whether or not it is there yet. */
  path(key: string): string;
  /**
   * Undefined when the file can be read at `path` now (or is surely not in the store's
   * directory: reading says ENOENT); else the promise of fetching it there: false when the store
   * has no such object.
   */
  ensure(key: string): Promise<boolean> | undefined;
  /** The bytes the cache holds on disk (0 for a local directory). */
  cachedBytes(): number;
}

/** The objects of a local directory, read where they are. */
export function localFilesOf(store: BlobStore): LocalFiles {
  if (!store.localPath) throw new Error(`${store.location} is not a local directory`);
  return { store, path: (key) => store.localPath!(key), ensure: () => undefined, cachedBytes: () => 0 };
}

export interface DiskCacheOptions {
  /** The folder of the cached files, this machine's own. */
  dir: string;
  /** Bytes kept on disk, the least recently used out first. */
  maxBytes: number;
}

/**
 * Objects of a remote store fetched into `dir`, each once however many requests want it at once,
 * written aside and renamed into place so a half-fetched file is never read. At most `maxBytes`
 * are kept, the least recently used removed first; files already there when the process starts
 * are counted in, so a restarted edge is still warm. An object larger than the bound is fetched,
 * used and removed on the next fetch.
 */
export async function createDiskCache(store: BlobStore, opts: DiskCacheOptions): Promise<LocalFiles> {
  const tmpDir = join(opts.dir, 'tmp');
  const path = (key: string) => join(opts.dir, checkKey(key));
  const kept = new LRUCache<string, number>({
    maxSize: opts.maxBytes,
    sizeCalculation: (size) => Math.max(1, size),
    // Removed when pushed out, at once (one unlink), so a fetch of it again cannot be removed by a
    // late delete; a request already reading it keeps its open file.
    dispose: (_size, key, reason) => {
      if (reason === 'evict' || reason === 'delete') rmSync(path(key), { force: true });
    },
  });
  const pending = new Map<string, Promise<boolean>>();

  async function fetchInto(key: string): Promise<boolean> {
    const body = await store.stream(key);
    if (!body) return false;
    await Promise.all([mkdir(tmpDir, { recursive: true }), mkdir(dirname(path(key)), { recursive: true })]);
    const tmp = join(tmpDir, `${randomString(16)}.tmp`);
    try {
      await pipeline(body, createWriteStream(tmp, { mode: 0o644 }));
      const { size } = await stat(tmp);
      await rename(tmp, path(key));
      kept.set(key, size, { noDisposeOnSet: true });
      return true;
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  await rm(tmpDir, { recursive: true, force: true });
  for await (const { key, size } of filesUnder(opts.dir, '')) kept.set(key, size, { noDisposeOnSet: true });

  return {
    store,
    path,
    ensure(key) {
      if (kept.get(key) !== undefined) return undefined;
      let p = pending.get(key);
      if (!p) {
        p = fetchInto(key).finally(() => pending.delete(key));
        pending.set(key, p);
      }
      return p;
    },
    cachedBytes: () => kept.calculatedSize,
  };
}

/** The files under `dir` as keys, oldest first is not promised. */
async function* filesUnder(dir: string, prefix: string): AsyncGenerator<{ key: string; size: number }> {
  const children = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  for (const child of children) {
    const key = prefix ? `${prefix}/${child.name}` : child.name;
    if (child.isDirectory()) yield* filesUnder(dir, key);
    else if (child.isFile()) {
      const s = await stat(join(dir, key)).catch(() => null);
      if (s) yield { key, size: s.size };
    }
  }
}
