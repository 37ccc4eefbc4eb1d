import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';

export type Encoding = 'br' | 'gzip';

/** Smaller files gain too little from compression to pay for it. */
export const MIN_COMPRESS_BYTES = 1024;
/** Larger files are sent as they are rather than holding the first request up. */
export const MAX_COMPRESS_BYTES = 32 * 1024 * 1024;

/** Picks br over gzip when the client accepts it (q > 0), else gzip, else null (identity). */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name.trim(), Number.isFinite(value) ? value : 0);
  }
  const accepts = (name: Encoding) => (q.get(name) ?? q.get('*') ?? 0) > 0;
  if (accepts('br')) return 'br';
  if (accepts('gzip')) return 'gzip';
  return null;
}

export interface CompressedFile {
  path: string;
  size: number;
}

export interface CompressedCache {
  /**
   * The compressed copy of a blob, made once and kept on disk at `<root>/compressed/<hash>.<enc>`;
   * null when compressing did not make it smaller (then send the original).
   */
  get(hash: string, source: string, size: number, encoding: Encoding): Promise<CompressedFile | null>;
  /** What `get` settled on for this blob and encoding, when it has; undefined when not known yet. */
  peek(hash: string, encoding: Encoding): CompressedFile | null | undefined;
}

/** Compressed copies of blobs, shared by every edge process that uses the same artifacts root. */
export function createCompressedCache(root: string): CompressedCache {
  const dir = join(root, 'compressed');
  const known = new Map<string, Promise<CompressedFile | null>>();
  /** The settled entries of `known`. */
  const settled = new Map<string, CompressedFile | null>();
  let dirReady: Promise<unknown> | null = null;

  const make = async (hash: string, source: string, size: number, encoding: Encoding) => {
    const path = join(dir, `${hash}.${encoding === 'br' ? 'br' : 'gz'}`);
    const existing = await stat(path).catch(() => null);
    if (existing) return existing.size < size ? { path, size: existing.size } : null;
    dirReady ??= mkdir(dir, { recursive: true });
    await dirReady;
    // Write aside and rename, so another process never reads a half-written file.
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const compressor =
      encoding === 'br'
        ? createBrotliCompress({
            params: {
              // Quality 11 is the smallest but slow (about 1 MB/s); the first request waits for it.
              [constants.BROTLI_PARAM_QUALITY]: size <= 256 * 1024 ? 11 : 5,
              [constants.BROTLI_PARAM_SIZE_HINT]: size,
            },
          })
        : createGzip({ level: 9 });
    try {
      await pipeline(createReadStream(source), compressor, createWriteStream(tmp));
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const done = await stat(path);
    return done.size < size ? { path, size: done.size } : null;
  };

  return {
    get(hash, source, size, encoding) {
      const key = `${hash}.${encoding}`;
      let entry = known.get(key);
      if (!entry) {
        const made = make(hash, source, size, encoding);
        entry = made;
        known.set(key, made);
        made.then(
          (file) => {
            if (known.get(key) === made) settled.set(key, file);
          },
          () => known.delete(key),
        );
        // Bound the memo; dropped entries are found again on disk with one stat.
        if (known.size > 10_000) {
          const oldest = known.keys().next().value!;
          known.delete(oldest);
          settled.delete(oldest);
        }
      }
      return entry;
    },
    peek(hash, encoding) {
      return settled.get(`${hash}.${encoding}`);
    },
  };
}
