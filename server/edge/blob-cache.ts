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
 * Small files in memory, least recently used out first. Safe without invalidation because every
 * path it is given names content by its hash (a blob or its compressed copy), which never changes.
 */
export function createBlobCache(opts: { maxBytes?: number; maxEntryBytes?: number } = {}): BlobCache {
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const maxEntryBytes = opts.maxEntryBytes ?? 256 * 1024;
  const entries = new Map<string, Buffer>();
  let total = 0;

  const peek = (path: string): Buffer | undefined => {
    const hit = entries.get(path);
    if (hit) {
      // Re-insert, so the map's order is least recently used first.
      entries.delete(path);
      entries.set(path, hit);
    }
    return hit;
  };

  return {
    maxEntryBytes,
    peek,
    async read(path) {
      const hit = peek(path);
      if (hit) return hit;
      const bytes = await readFile(path);
      if (bytes.length <= maxEntryBytes && !entries.has(path)) {
        entries.set(path, bytes);
        total += bytes.length;
        for (const [key, value] of entries) {
          if (total <= maxBytes) break;
          entries.delete(key);
          total -= value.length;
        }
      }
      return bytes;
    },
  };
}
