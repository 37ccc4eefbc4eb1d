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

/**
 * Small files in memory, up to `maxBytes` in all, least recently used out first. Safe without
 * invalidation because every path it is given names content by its hash (a blob or its
 * compressed copy), which never changes. Concurrent reads of one file share one read.
 */
export function createBlobCache(opts: { maxBytes?: number; maxEntryBytes?: number } = {}): BlobCache {
  const maxEntryBytes = opts.maxEntryBytes ?? 256 * 1024;
  const entries = new LRUCache<string, Buffer>({
    maxSize: opts.maxBytes ?? 64 * 1024 * 1024,
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
