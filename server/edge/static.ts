import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ArtifactReader, Manifest, ManifestFile } from './artifact-reader.ts';
import { createBlobCache, type BlobCache } from './blob-cache.ts';
import { cacheControlFor, REVALIDATE } from './cache-control.ts';
import {
  MAX_COMPRESS_BYTES,
  MIN_COMPRESS_BYTES,
  acceptedEncodings,
  type CompressedCache,
  type CompressedFile,
  type Encoding,
} from './compression.ts';
import { contentTypeOf, extensionOf } from './content-types.ts';
import { EDGE_PAGES, sendPage } from './pages.ts';
import { parseRange } from './range.ts';
import type { Target } from './resolve-host.ts';

/** Counts the body bytes a response sent, for traffic metrics. */
export interface ByteCounter {
  bytes: number;
}

/** The manifest entry a request path serves, and with which status. */
export interface Match {
  path: string;
  file: ManifestFile;
  status: 200 | 404;
}

/**
 * Maps a decoded request path to a file of the manifest: `/` -> `/index.html`, `/about` ->
 * `/about.html` or `/about/index.html`; then, for single-page apps, an extensionless path falls
 * back to `/index.html`; otherwise the app's own `/404.html` answers 404. Only manifest keys can
 * ever match, which is what keeps `..` and friends from reaching the disk.
 */
export function matchPath(manifest: Manifest, path: string, spa: boolean): Match | null {
  const files = manifest.files;
  if (isPrivatePath(path)) {
    return files['/404.html'] ? { path: '/404.html', file: files['/404.html'], status: 404 } : null;
  }
  const candidates = path.endsWith('/')
    ? [`${path}index.html`, ...(path === '/' ? [] : [`${path.slice(0, -1)}.html`])]
    : [path, `${path}.html`, `${path}/index.html`];
  for (const c of candidates) {
    const file = Object.hasOwn(files, c) ? files[c] : undefined;
    if (file) return { path: c, file, status: 200 };
  }
  if (spa && extensionOf(path) === '' && files['/index.html']) {
    return { path: '/index.html', file: files['/index.html'], status: 200 };
  }
  if (files['/404.html']) return { path: '/404.html', file: files['/404.html'], status: 404 };
  return null;
}

/**
 * Files a build output may hold by accident and must never publish: anything in a `.git`
 * directory (the repository's history, remotes, credentials in `.git/config`) and `.env` files
 * (`.env`, `.env.local`, `.env.production`...), at any depth. They answer as if absent.
 */
export function isPrivatePath(path: string): boolean {
  return path
    .toLowerCase()
    .split('/')
    .some((segment) => segment === '.git' || segment === '.env' || segment.startsWith('.env.'));
}

/** The path of a request URL, percent-decoded; null when it cannot be decoded. */
export function requestPath(url: string | undefined): string | null {
  let raw = url ?? '/';
  if (!raw.startsWith('/')) {
    // Absolute-form (`GET http://host/path`), which proxies send.
    try {
      raw = new URL(raw).pathname;
    } catch {
      return null;
    }
  }
  const end = raw.search(/[?#]/);
  if (end !== -1) raw = raw.slice(0, end);
  try {
    const path = decodeURIComponent(raw);
    return path.includes('\0') ? null : path;
  } catch {
    return null;
  }
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

const etagMatches = (header: string | undefined, hash: string): boolean =>
  !!header &&
  header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === `"${hash}"`;
  });

export interface StaticServerOptions {
  artifacts: ArtifactReader;
  compressed: CompressedCache;
  /** Small blobs kept in memory; default 64 MiB of files up to 256 KiB. */
  blobs?: BlobCache;
}

/** Serves a deployment's files from its artifact. */
export function createStaticServer(opts: StaticServerOptions) {
  const { artifacts, compressed } = opts;
  const blobs = opts.blobs ?? createBlobCache();

  /**
   * Sends a matched file. Synchronous (returns undefined) when everything it needs is in memory,
   * which is most requests of a warm edge; otherwise returns the promise of the disk work.
   */
  function sendFile(
    req: IncomingMessage,
    res: ServerResponse,
    match: Match,
    manifest: Manifest,
    counter: ByteCounter,
  ): void | Promise<void> {
    const { file, status } = match;
    const type = contentTypeOf(match.path);
    const lastModified = lastModifiedOf(manifest);
    const headers: Record<string, string | number> = {
      'Content-Type': type.type,
      ETag: `"${file.hash}"`,
      'Cache-Control': status === 200 ? cacheControlFor(match.path) : REVALIDATE,
    };
    if (lastModified) headers['Last-Modified'] = lastModified.header;
    const compressible =
      type.compressible && file.size >= MIN_COMPRESS_BYTES && file.size <= MAX_COMPRESS_BYTES;
    if (compressible) headers.Vary = 'Accept-Encoding';

    if (status === 200 && isNotModified(req, file.hash, lastModified?.date)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }

    const blob = artifacts.blobPath(file.hash);
    let start = 0;
    let end = file.size - 1;
    let code: number = status;
    if (status === 200) {
      headers['Accept-Ranges'] = 'bytes';
      const range = rangeFor(req, file.hash, lastModified?.date, file.size);
      if (range === 'unsatisfiable') {
        res.writeHead(416, { ...headers, 'Content-Range': `bytes */${file.size}`, 'Content-Length': 0 });
        res.end();
        return;
      }
      if (range) {
        ({ start, end } = range);
        code = 206;
        headers['Content-Range'] = `bytes ${start}-${end}/${file.size}`;
      }
    }

    const missing = () => {
      counter.bytes += sendPage(req, res, EDGE_PAGES.filesIncomplete(match.path));
    };

    /** Sends the blob, or the compressed copy of it when there is one. */
    const send = (copy: CompressedFile | null, encoding: Encoding | null): void | Promise<void> => {
      let sendPath = blob;
      let sendSize = file.size;
      if (copy && encoding) {
        sendPath = copy.path;
        sendSize = copy.size;
        start = 0;
        end = copy.size - 1;
        headers['Content-Encoding'] = encoding;
        // Weak: the bytes differ from the identity representation that the strong tag names.
        headers.ETag = `W/"${file.hash}"`;
      }
      headers['Content-Length'] = end - start + 1;

      // Small files come from memory: most of a site's requests, without a file handle each.
      if (sendSize <= blobs.maxEntryBytes) {
        const sendBytes = (bytes: Buffer) => {
          res.writeHead(code, headers);
          if (req.method === 'HEAD') {
            res.end();
            return;
          }
          const body = start === 0 && end === bytes.length - 1 ? bytes : bytes.subarray(start, end + 1);
          counter.bytes += body.length;
          res.end(body);
        };
        const inMemory = blobs.peek(sendPath);
        if (inMemory) return sendBytes(inMemory);
        return blobs.read(sendPath).then(sendBytes, (err: unknown) => {
          if (!isMissing(err)) throw err;
          missing();
        });
      }
      return streamFile(sendPath);
    };

    const streamFile = async (path: string): Promise<void> => {
      let handle: FileHandle;
      try {
        handle = await open(path, 'r');
      } catch (err) {
        if (!isMissing(err)) throw err;
        return missing();
      }
      res.writeHead(code, headers);
      if (req.method === 'HEAD') {
        await handle.close();
        res.end();
        return;
      }
      const stream = handle.createReadStream({ start, end, autoClose: true });
      stream.on('data', (chunk: string | Buffer) => {
        counter.bytes += chunk.length;
      });
      try {
        await pipeline(stream, res);
      } catch {
        // The client went away mid-body; the socket is already closed and there is nothing to answer.
      }
    };

    // Ranges address the identity bytes, so only whole responses are compressed. A copy not made
    // yet is queued and this response goes out as it is: compressing never holds a request up.
    if (code === 206 || !compressible) return send(null, null);
    const accepted = acceptedEncodings(req.headers['accept-encoding']);
    for (const encoding of accepted) {
      const copy = compressed.peek(file.hash, encoding);
      if (copy) return send(copy, encoding);
    }
    // gzip first: it is made in a fraction of Brotli's time, so the next request has something.
    for (const encoding of accepted.toReversed()) {
      if (compressed.peek(file.hash, encoding) === undefined) {
        compressed.prepare(file.hash, blob, file.size, encoding);
      }
    }
    return send(null, null);
  }

  /** Answers once the manifest is known: the file the path maps to, or the right page. */
  function serveFrom(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    manifest: Manifest | null,
    counter: ByteCounter,
  ): void | Promise<void> {
    if (!manifest) {
      counter.bytes += sendPage(req, res, EDGE_PAGES.filesNotAvailable());
      return;
    }
    const path = requestPath(req.url);
    if (path === null) {
      counter.bytes += sendPage(req, res, EDGE_PAGES.badPath());
      return;
    }
    const match = matchPath(manifest, path, target.spa);
    if (!match) {
      counter.bytes += sendPage(req, res, EDGE_PAGES.pageNotFound(path));
      return;
    }
    return sendFile(req, res, match, manifest, counter);
  }

  return {
    /**
     * Answers a request for a static target; never rejects for a client's mistake. Returns
     * undefined when it answered at once (everything was in memory), else the promise of the rest.
     */
    serve(
      req: IncomingMessage,
      res: ServerResponse,
      target: Target,
      counter: ByteCounter,
    ): void | Promise<void> {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        counter.bytes += sendPage(req, res, EDGE_PAGES.methodNotAllowed(req.method));
        return;
      }
      if (!target.artifactId) return serveFrom(req, res, target, null, counter);
      const loaded = artifacts.peek(target.artifactId);
      if (loaded) return serveFrom(req, res, target, loaded, counter);
      return artifacts
        .manifest(target.artifactId)
        .then((manifest) => serveFrom(req, res, target, manifest, counter));
    },
  };
}

/** A manifest's creation time as a date and as the Last-Modified value; null when it is not a date. */
const lastModifiedCache = new WeakMap<Manifest, { date: Date; header: string } | null>();
function lastModifiedOf(manifest: Manifest): { date: Date; header: string } | null {
  let value = lastModifiedCache.get(manifest);
  if (value === undefined) {
    const date = new Date(manifest.createdAt);
    value = Number.isNaN(date.getTime()) ? null : { date, header: date.toUTCString() };
    lastModifiedCache.set(manifest, value);
  }
  return value;
}

function isNotModified(req: IncomingMessage, hash: string, lastModified: Date | undefined): boolean {
  const inm = req.headers['if-none-match'];
  // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
  if (inm !== undefined) return etagMatches(inm, hash);
  const ims = req.headers['if-modified-since'];
  if (!ims || !lastModified) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
}

function rangeFor(req: IncomingMessage, hash: string, lastModified: Date | undefined, size: number) {
  const ifRange = req.headers['if-range'];
  if (typeof ifRange === 'string') {
    // If-Range needs a strong match; a validator that does not match means "send it all".
    const fresh = ifRange.startsWith('"')
      ? ifRange === `"${hash}"`
      : !!lastModified && Date.parse(ifRange) >= Math.floor(lastModified.getTime() / 1000) * 1000;
    if (!fresh) return null;
  }
  return parseRange(req.headers.range, size);
}
