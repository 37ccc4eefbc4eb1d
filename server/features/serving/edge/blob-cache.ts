import { LRUCache } from 'lru-cache';
import { readFile } from 'node:fs/promises';

export interface BlobCache {
  /** Largest file kept in memory. */
  maxEntryBytes: number;
  /** The file's bytes, from memory when read before; rejects like readFile (ENOENT). */
  read(path: string): Promise<Buffer>;
  /** The file's bytes when they are in memory (counts as a use), without touching the disk. */
  peek(path: string): Buffer | undefined;
}

/** Default bound of the files kept in memory: 256 MiB. */
export const DEFAULT_FILE_CACHE_BYTES = 256 * 1024 * 1024;

/**
 * Small files in memory, up to `maxBytes` in all (default 256 MiB), least recently used out
 * first. Like the manifests, they must hold the files that traffic comes round to: traffic spread
 * over more small files than fit reads every one from disk again (an LRU cache keeps nothing of
 * a cycle larger than itself), so the default holds 10,000 sites' 10 KiB pages twice over. Safe
 * without invalidation because every path it is given names content by its hash (a blob or its
 * compressed copy), which never changes. Concurrent reads of one file share one read.
 */
export function createBlobCache(opts: { maxBytes?: number; maxEntryBytes?: number } = {}): BlobCache {
  const maxEntryBytes = opts.maxEntryBytes ?? 256 * 1024;
  const entries = new LRUCache<string, Buffer>({
    maxSize: opts.maxBytes ?? DEFAULT_FILE_CACHE_BYTES,
    // Larger files are read, answered and not kept.
    maxEntrySize: maxEntryBytes,
    // An empty file still takes an entry.
    sizeCalculation: (bytes) => Math.max(1, bytes.length),
    fetchMethod: (path) => readFile(path),
  });

  return {
    maxEntryBytes,
    peek: (path) => entries.get(path),
    async read(path) {
      return (await entries.fetch(path))!;
    },
  };
}
