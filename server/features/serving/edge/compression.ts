import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';

export type Encoding = 'br' | 'gzip';

/** Smaller files gain too little from compression to pay for it. */
export const MIN_COMPRESS_BYTES = 1024;
/** Larger files are sent as they are rather than holding the first request up. */
export const MAX_COMPRESS_BYTES = 32 * 1024 * 1024;

/** Picks br over gzip when the client accepts it (q > 0), else gzip, else null (identity). */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | null {
  return acceptedEncodings(acceptEncoding)[0] ?? null;
}

const NONE: readonly Encoding[] = Object.freeze([]);
/**
 * Accept-Encoding values already parsed: browsers send a handful of distinct ones, and parsing
 * one cost a warm request more than the rest of choosing its file.
 */
const parsed = new LRUCache<string, readonly Encoding[]>({ max: 64 });

/** The encodings the client accepts (q > 0), best first: br, then gzip. Shared: never change it. */
export function acceptedEncodings(acceptEncoding: string | undefined): readonly Encoding[] {
  if (!acceptEncoding) return NONE;
  let accepted = parsed.get(acceptEncoding);
  if (!accepted) {
    accepted = Object.freeze(parseAcceptEncoding(acceptEncoding));
    parsed.set(acceptEncoding, accepted);
  }
  return accepted;
}

function parseAcceptEncoding(acceptEncoding: string): Encoding[] {
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name.trim(), Number.isFinite(value) ? value : 0);
  }
  const accepts = (name: Encoding) => (q.get(name) ?? q.get('*') ?? 0) > 0;
  return (['br', 'gzip'] as const).filter(accepts);
}

export interface CompressedFile {
  path: string;
  size: number;
}

export interface CompressedCache {
  /**
   * The compressed copy of a blob, made once and kept on disk at `<root>/compressed/<hash>.<enc>`;
   * null when compressing did not make it smaller (then send the original). Made in the
   * background queue, so this may wait behind other files.
   */
  get(hash: string, source: string, size: number, encoding: Encoding): Promise<CompressedFile | null>;
  /**
   * Queues the copy to be made, unless it is made, being made or queued already, or the queue is
   * full (a later request asks again). Requests never wait for it.
   */
  prepare(hash: string, source: string, size: number, encoding: Encoding): void;
  /** Drops the copies still queued (the edge is closing); the one being made finishes. */
  stop(): void;
  /** What `get` settled on for this blob and encoding, when it has; undefined when not known yet. */
  peek(hash: string, encoding: Encoding): CompressedFile | null | undefined;
}

export interface CompressionOptions {
  /** Copies made at once; default one less than the cores (at least 1, at most 4). */
  concurrency?: number;
  /** Copies waiting to be made; beyond this `prepare` drops the request. Default 1000. */
  maxQueued?: number;
}

/**
 * Compressed copies of blobs, shared by every edge process that uses the same artifacts root.
 * Copies are made off the request path by a small queue: Brotli at its best quality takes about
 * a third of a second per 256 KiB, and zlib runs in libuv's thread pool, which file reads share;
 * one tenant's flood of new files must not stall everyone's reads. See docs/edge.md.
 */
export function createCompressedCache(root: string, opts: CompressionOptions = {}): CompressedCache {
  const dir = join(root, 'compressed');
  const queue = pLimit(opts.concurrency ?? Math.min(4, Math.max(1, availableParallelism() - 1)));
  const maxQueued = opts.maxQueued ?? 1000;
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
              // Quality 11 is the smallest but slow (about 1 MB/s); no request waits for it.
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

  type Job = { hash: string; source: string; size: number; encoding: Encoding };
  /**
   * What each copy came to, by `<hash>.<encoding>` (`file: null`: not smaller), the least recently
   * used out first: a dropped one is found again on disk with one stat. Concurrent requests for
   * one copy share its making; a failure (source gone, disk full) is not remembered.
   *
   * Like the manifests and the file bytes, this must hold what traffic comes round to: a copy not
   * known is sent uncompressed and looked up again, so a cycle of more copies than fit (10,000
   * one-page sites asked in both encodings by browsers) would answer every request uncompressed.
   * An entry is its key and path, about 300 bytes: 100,000 take about 30 MB.
   */
  const known = new LRUCache<string, { file: CompressedFile | null }, Job>({
    max: 100_000,
    fetchMethod: async (_key, _stale, { context: j }) => ({
      file: await queue(() => make(j.hash, j.source, j.size, j.encoding)),
    }),
  });

  const cache: CompressedCache = {
    async get(hash, source, size, encoding) {
      const entry = await known.fetch(`${hash}.${encoding}`, { context: { hash, source, size, encoding } });
      return entry!.file;
    },
    prepare(hash, source, size, encoding) {
      // A copy being made is not counted by `has`, but `get` joins it rather than queue it again.
      if (known.has(`${hash}.${encoding}`) || queue.pendingCount >= maxQueued) return;
      // A failure (source gone, disk full) is forgotten: the file is sent as it is, and asked again.
      cache.get(hash, source, size, encoding).catch(() => {});
    },
    peek(hash, encoding) {
      return known.get(`${hash}.${encoding}`)?.file;
    },
    stop() {
      queue.clearQueue();
    },
  };
  return cache;
}
