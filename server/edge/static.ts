import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ArtifactReader, Manifest, ManifestFile } from './artifact-reader.ts';
import { createBlobCache, type BlobCache } from './blob-cache.ts';
import { cacheControlFor, REVALIDATE } from './cache-control.ts';
import {
  MAX_COMPRESS_BYTES,
  MIN_COMPRESS_BYTES,
  acceptedEncodings,
  type CompressedCache,
  type Encoding,
} from './compression.ts';
import { contentTypeOf, extensionOf } from './content-types.ts';
import { DEPLOYMENT_HEADER } from '../lib/edge-headers.ts';
import { EDGE_PAGES, sendPage, type EdgePage } from './pages.ts';
import { parseRange } from './range.ts';
import type { Target } from './resolve-host.ts';
import { headerList, withHeaderRules } from '../routing/apply-headers.ts';
import { NO_RULES, type HeaderMatch, type RoutingRules } from '../routing/match-rules.ts';
import { rulesFolderOf } from '../routing/rules-folder.ts';
import { sendRedirect } from './send-redirect.ts';

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
  if (isPrivatePath(path) || isRulesFile(path)) {
    return files['/404.html'] ? { path: '/404.html', file: files['/404.html'], status: 404 } : null;
  }
  const found = fileFor(files, path);
  if (found) return found;
  if (spa && extensionOf(path) === '' && files['/index.html']) {
    return { path: '/index.html', file: files['/index.html'], status: 200 };
  }
  if (files['/404.html']) return { path: '/404.html', file: files['/404.html'], status: 404 };
  return null;
}

/**
 * The file a path names by itself, without fallbacks: `/about` -> `/about`, `/about.html` or
 * `/about/index.html`; `/docs/` -> `/docs/index.html` or `/docs.html`. What a `_redirects` rule
 * without `!` gives way to. Private paths are the caller's to refuse.
 */
function fileFor(files: Manifest['files'], path: string): Match | null {
  // Tried in order; written out rather than as a list, which every request would build.
  return path.endsWith('/')
    ? (fileAt(files, `${path}index.html`) ??
        (path === '/' ? null : fileAt(files, `${path.slice(0, -1)}.html`)))
    : (fileAt(files, path) ?? fileAt(files, `${path}.html`) ?? fileAt(files, `${path}/index.html`));
}

/** Whether a file exists at a path for `_redirects` shadowing: one a request for it would get with 200. */
function fileExistsAt(files: Manifest['files'], path: string): boolean {
  return !isPrivatePath(path) && !isRulesFile(path) && fileFor(files, path) !== null;
}

/**
 * The routing rules files of a static deployment (its artifact's root: rulesFolderOf), which the
 * edge reads and never serves.
 */
function isRulesFile(path: string): boolean {
  return path === '/_redirects' || path === '/_headers';
}

/** The manifest's file at exactly `path` as a 200 match; only its own keys count. */
function fileAt(files: Manifest['files'], path: string): Match | null {
  const file = Object.hasOwn(files, path) ? files[path] : undefined;
  return file ? { path, file, status: 200 } : null;
}

/**
 * Files a build output may hold by accident and must never publish: anything in a `.git`
 * directory (the repository's history, remotes, credentials in `.git/config`) and `.env` files
 * (`.env`, `.env.local`, `.env.production`...), at any depth. They answer as if absent.
 */
export function isPrivatePath(path: string): boolean {
  // Every segment refused here starts with a dot; most paths have no such segment at all.
  if (!path.startsWith('.') && !path.includes('/.')) return false;
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
  const query = raw.indexOf('?');
  const fragment = raw.indexOf('#');
  const end = fragment !== -1 && (query === -1 || fragment < query) ? fragment : query;
  if (end !== -1) raw = raw.slice(0, end);
  // Without a `%` there is nothing to decode, and nothing that could fail to.
  if (!raw.includes('%')) return raw.includes('\0') ? null : raw;
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
  /** Small blobs kept in memory; default 256 MiB of files up to 256 KiB (blob-cache.ts). */
  blobs?: BlobCache;
}

/**
 * Header fields as a flat list, name, value, name, value..., the form writeHead reads fastest.
 * Nothing may call setHeader before: Node would then copy every field into its header map first.
 */
type HeaderList = string[];

/** What a whole-file answer sends (the blob or a compressed copy of it) and its header fields. */
interface WholeAnswer {
  path: string;
  size: number;
  /** Every field but the deployment's name (see `headersNaming`). */
  headers: HeaderList;
  /**
   * The fields with the name of the deployment that last sent this answer in front: the one that
   * serves the artifact, nearly always, so a request does not copy the list.
   */
  named?: { deploymentId: string; headers: HeaderList };
}

/** A whole answer's fields, the deployment's name first. Node only reads the list it is given. */
function headersNaming(whole: WholeAnswer, deploymentId: string): HeaderList {
  if (whole.named?.deploymentId === deploymentId) return whole.named.headers;
  const headers = [DEPLOYMENT_HEADER, deploymentId, ...whole.headers];
  whole.named = { deploymentId, headers };
  return headers;
}

/**
 * One file of a manifest as answered with one status: what all its answers share, worked out on
 * its first request instead of on each one (its type, cache policy and validators, its blob's
 * path, the fields of the whole answer). Manifests never change, so neither does this; it goes
 * with its manifest (see `preparedFiles`). Per request stay the deployment's name, the method
 * (HEAD), conditional and range headers, and the encodings the client accepts.
 */
interface PreparedFile {
  /** The manifest path it was matched as: pages name it. */
  path: string;
  file: ManifestFile;
  status: 200 | 404;
  blob: string;
  /** Sent compressed when the client accepts it and a copy is ready (type and size allow). */
  compressible: boolean;
  lastModified: Date | undefined;
  /** Content-Type, ETag, Cache-Control, Last-Modified and Vary: what every answer carries, a 304 too. */
  fields: Readonly<Record<string, string>>;
  /** The whole file as it is. */
  identity: WholeAnswer;
  /** The whole compressed copies, made on the first answer that sends each. */
  encoded: Partial<Record<Encoding, WholeAnswer>>;
}

/** Serves a deployment's files from its artifact. */
export function createStaticServer(opts: StaticServerOptions) {
  const { artifacts, compressed } = opts;
  const blobs = opts.blobs ?? createBlobCache();
  /**
   * Prepared files by manifest, then by path, one map per status (`/404.html` is both a page of
   * its own and every missing path's answer). Held no longer than the manifest itself, which the
   * reader keeps a bounded number of: at most two entries per file of a cached manifest.
   */
  const preparedFiles = new WeakMap<Manifest, Record<200 | 404, Map<string, PreparedFile>>>();

  function prepared(manifest: Manifest, match: Match): PreparedFile {
    let byStatus = preparedFiles.get(manifest);
    if (!byStatus) {
      byStatus = { 200: new Map(), 404: new Map() };
      preparedFiles.set(manifest, byStatus);
    }
    const byPath = byStatus[match.status];
    let file = byPath.get(match.path);
    if (!file) {
      file = prepareFile(match, manifest, artifacts.blobPath(match.file.hash));
      byPath.set(match.path, file);
    }
    return file;
  }

  /** Answers with one of the edge's pages, naming the deployment as every answer about it does. */
  function page(req: IncomingMessage, res: ServerResponse, deploymentId: string, edgePage: EdgePage): number {
    res.setHeader(DEPLOYMENT_HEADER, deploymentId);
    return sendPage(req, res, edgePage);
  }

  /**
   * Sends a matched file. Synchronous (returns undefined) when everything it needs is in memory,
   * which is most requests of a warm edge; otherwise returns the promise of the disk work.
   */
  function sendFile(
    req: IncomingMessage,
    res: ServerResponse,
    deploymentId: string,
    p: PreparedFile,
    counter: ByteCounter,
    headerRules: readonly HeaderMatch[] | null = null,
    fetched = false,
  ): void | Promise<void> {
    const { file, status } = p;
    if (status === 200 && isNotModified(req, file.hash, p.lastModified)) {
      res.writeHead(304, withRules({ [DEPLOYMENT_HEADER]: deploymentId, ...p.fields }, headerRules));
      res.end();
      return;
    }
    // Object storage: a blob not on this edge's disk yet is fetched there first, once.
    const ready = fetched ? undefined : artifacts.ensureBlob(file.hash);
    if (ready) {
      return ready.then((found) => {
        if (found) return sendFile(req, res, deploymentId, p, counter, headerRules, true);
        counter.bytes += page(req, res, deploymentId, EDGE_PAGES.filesIncomplete(p.path));
      });
    }
    if (status === 200) {
      const range = rangeFor(req, file.hash, p.lastModified, file.size);
      if (range === 'unsatisfiable') {
        res.writeHead(
          416,
          withRules(
            {
              [DEPLOYMENT_HEADER]: deploymentId,
              ...p.fields,
              'Accept-Ranges': 'bytes',
              'Content-Range': `bytes */${file.size}`,
              'Content-Length': 0,
            },
            headerRules,
          ),
        );
        res.end();
        return;
      }
      // Ranges address the identity bytes, so only whole answers are compressed.
      if (range) {
        const { start, end } = range;
        const headers = {
          [DEPLOYMENT_HEADER]: deploymentId,
          ...p.fields,
          'Accept-Ranges': 'bytes',
          'Content-Range': `bytes ${start}-${end}/${file.size}`,
          'Content-Length': end - start + 1,
        };
        return sendBytes(
          req,
          res,
          deploymentId,
          p,
          p.blob,
          file.size,
          start,
          end,
          206,
          withRules(headers, headerRules),
          counter,
        );
      }
    }
    const whole = p.compressible ? negotiate(req, p) : p.identity;
    const named = headersNaming(whole, deploymentId);
    return sendBytes(
      req,
      res,
      deploymentId,
      p,
      whole.path,
      whole.size,
      0,
      whole.size - 1,
      status,
      headerRules ? withHeaderRules(named, headerRules) : named,
      counter,
    );
  }

  /**
   * The whole answer for the encodings the client accepts: a compressed copy when one is made. A
   * copy not made yet is queued and this answer goes out as it is: compressing never holds a
   * request up.
   */
  function negotiate(req: IncomingMessage, p: PreparedFile): WholeAnswer {
    const { hash, size } = p.file;
    const accepted = acceptedEncodings(req.headers['accept-encoding']);
    if (accepted.length === 0) return p.identity;
    for (const encoding of accepted) {
      const copy = compressed.peek(hash, encoding);
      if (copy) {
        const known = p.encoded[encoding];
        if (known?.path === copy.path && known.size === copy.size) return known;
        return (p.encoded[encoding] = wholeAnswer(p, copy.path, copy.size, encoding));
      }
    }
    // gzip first: it is made in a fraction of Brotli's time, so the next request has something.
    for (const encoding of accepted.toReversed()) {
      if (compressed.peek(hash, encoding) === undefined) compressed.prepare(hash, p.blob, size, encoding);
    }
    return p.identity;
  }

  /**
   * Sends bytes `start` to `end` of a blob or compressed copy: small files from memory (at once
   * when they are there: most of a site's requests, without a file handle each), others streamed
   * from disk.
   */
  function sendBytes(
    req: IncomingMessage,
    res: ServerResponse,
    deploymentId: string,
    p: PreparedFile,
    path: string,
    size: number,
    start: number,
    end: number,
    code: number,
    headers: OutgoingHttpHeaders | HeaderList,
    counter: ByteCounter,
  ): void | Promise<void> {
    if (size <= blobs.maxEntryBytes) {
      const inMemory = blobs.peek(path);
      if (inMemory) return writeBytes(req, res, inMemory, start, end, code, headers, counter);
      return blobs.read(path).then(
        (bytes) => writeBytes(req, res, bytes, start, end, code, headers, counter),
        (err: unknown) => {
          if (!isMissing(err)) throw err;
          counter.bytes += page(req, res, deploymentId, EDGE_PAGES.filesIncomplete(p.path));
        },
      );
    }
    return streamFile(req, res, deploymentId, p, path, start, end, code, headers, counter);
  }

  async function streamFile(
    req: IncomingMessage,
    res: ServerResponse,
    deploymentId: string,
    p: PreparedFile,
    path: string,
    start: number,
    end: number,
    code: number,
    headers: OutgoingHttpHeaders | HeaderList,
    counter: ByteCounter,
  ): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if (!isMissing(err)) throw err;
      counter.bytes += page(req, res, deploymentId, EDGE_PAGES.filesIncomplete(p.path));
      return;
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
  }

  /**
   * Answers once the manifest is known: by the deployment's routing rules when it has any
   * (`serveRouted`), else the file the path maps to or the right page (`serveFrom`).
   */
  function serveManifest(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    manifest: Manifest | null,
    counter: ByteCounter,
  ): void | Promise<void> {
    if (!manifest) return serveFrom(req, res, target, null, counter);
    const rules = artifacts.routingRules(manifest, rulesFolderOf(target));
    if (rules === NO_RULES) return serveFrom(req, res, target, manifest, counter);
    if (rules instanceof Promise) {
      return rules.then((r) => serveRouted(req, res, target, manifest, r, counter));
    }
    return serveRouted(req, res, target, manifest, rules, counter);
  }

  /**
   * Answers by `_redirects` and `_headers`: a redirect from the edge, or the file a rewrite points
   * to, or the file the path maps to as without rules; then the headers of every matching block.
   * Redirects answer any method (a 307 or 308 keeps it); files answer GET and HEAD.
   */
  function serveRouted(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    manifest: Manifest,
    rules: RoutingRules,
    counter: ByteCounter,
  ): void | Promise<void> {
    const path = requestPath(req.url);
    if (path === null) {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.badPath());
      return;
    }
    const files = manifest.files;
    const answer = rules.redirect(path, req.url ?? '/', (p) => fileExistsAt(files, p));
    const headerRules = rules.headers(path);
    if (answer?.kind === 'redirect') {
      counter.bytes += sendRedirect(req, res, target.deploymentId, answer, headerRules);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.methodNotAllowed(req.method));
      return;
    }
    let match: Match | null;
    if (answer) {
      // A rewrite serves its target as a request for it would, but with the rule's status.
      match = matchPath(manifest, answer.path, false);
      if (match && answer.status === 404) match = { ...match, status: 404 };
    } else {
      match = matchPath(manifest, path, target.spa);
    }
    if (!match) {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.pageNotFound(path));
      return;
    }
    return sendFile(req, res, target.deploymentId, prepared(manifest, match), counter, headerRules);
  }

  /** Answers without routing rules: the file the path maps to, or the right page. */
  function serveFrom(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    manifest: Manifest | null,
    counter: ByteCounter,
  ): void | Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.methodNotAllowed(req.method));
      return;
    }
    if (!manifest) {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.filesNotAvailable());
      return;
    }
    const path = requestPath(req.url);
    if (path === null) {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.badPath());
      return;
    }
    // A path that is itself a file answered before needs no matching: only a manifest's own
    // file paths are keys there, and matchPath maps such a path to that file.
    const known = preparedFiles.get(manifest)?.[200].get(path);
    if (known) return sendFile(req, res, target.deploymentId, known, counter);
    const match = matchPath(manifest, path, target.spa);
    if (!match) {
      counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.pageNotFound(path));
      return;
    }
    return sendFile(req, res, target.deploymentId, prepared(manifest, match), counter);
  }

  return {
    /**
     * Answers a request for a static target; never rejects for a client's mistake. Returns
     * undefined when it answered at once (everything was in memory), else the promise of the rest.
     * Every answer names the deployment (DEPLOYMENT_HEADER): the caller does not set it.
     */
    serve(
      req: IncomingMessage,
      res: ServerResponse,
      target: Target,
      counter: ByteCounter,
    ): void | Promise<void> {
      if (!target.artifactId) return serveFrom(req, res, target, null, counter);
      const loaded = artifacts.peek(target.artifactId);
      if (loaded) return serveManifest(req, res, target, loaded, counter);
      return artifacts
        .manifest(target.artifactId)
        .then((manifest) => serveManifest(req, res, target, manifest, counter));
    },

    /**
     * For a server app with assets (Target.assetsArtifactId): answers a GET or HEAD for exactly
     * the path of one of them and returns true (or a promise of it); returns false, having sent
     * nothing, for anything else, which is the app's to answer.
     */
    serveAsset(
      req: IncomingMessage,
      res: ServerResponse,
      target: Target,
      counter: ByteCounter,
    ): boolean | Promise<boolean> {
      const id = target.assetsArtifactId;
      if (!id || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
      const loaded = artifacts.peek(id);
      if (loaded) return assetFrom(req, res, target, loaded, counter);
      return artifacts.manifest(id).then((manifest) => assetFrom(req, res, target, manifest, counter));
    },
  };

  function assetFrom(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    manifest: Manifest | null,
    counter: ByteCounter,
  ): boolean | Promise<boolean> {
    const path = manifest ? requestPath(req.url) : null;
    if (!manifest || path === null || isPrivatePath(path) || isRulesFile(path)) return false;
    const known = preparedFiles.get(manifest)?.[200].get(path);
    const match = known ? null : fileAt(manifest.files, path);
    if (!known && !match) return false;
    const sent = sendFile(req, res, target.deploymentId, known ?? prepared(manifest, match!), counter);
    return sent ? sent.then(() => true) : true;
  }
}

/** Header fields with the matching `_headers` blocks applied, as a flat list; as they are without any. */
function withRules(
  headers: Record<string, string | number>,
  headerRules: readonly HeaderMatch[] | null,
): OutgoingHttpHeaders | HeaderList {
  return headerRules ? withHeaderRules(headerList(headers), headerRules) : headers;
}

/** Writes a file's answer from its bytes in memory (the headers alone for HEAD). */
function writeBytes(
  req: IncomingMessage,
  res: ServerResponse,
  bytes: Buffer,
  start: number,
  end: number,
  code: number,
  headers: OutgoingHttpHeaders | HeaderList,
  counter: ByteCounter,
): void {
  res.writeHead(code, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const body = start === 0 && end === bytes.length - 1 ? bytes : bytes.subarray(start, end + 1);
  counter.bytes += body.length;
  res.end(body);
}

function prepareFile(match: Match, manifest: Manifest, blob: string): PreparedFile {
  const { path, file, status } = match;
  const type = contentTypeOf(path);
  const lastModified = lastModifiedOf(manifest);
  const fields: Record<string, string> = {
    'Content-Type': type.type,
    ETag: `"${file.hash}"`,
    'Cache-Control': status === 200 ? cacheControlFor(path) : REVALIDATE,
  };
  if (lastModified) fields['Last-Modified'] = lastModified.header;
  const compressible =
    type.compressible && file.size >= MIN_COMPRESS_BYTES && file.size <= MAX_COMPRESS_BYTES;
  if (compressible) fields.Vary = 'Accept-Encoding';
  const p = { path, file, status, blob, compressible, lastModified: lastModified?.date, fields, encoded: {} };
  return { ...p, identity: wholeAnswer(p, blob, file.size, null) };
}

/** The header fields of a whole answer: the file's, then Accept-Ranges, Content-Encoding, Content-Length. */
function wholeAnswer(
  p: Pick<PreparedFile, 'file' | 'status' | 'fields'>,
  path: string,
  size: number,
  encoding: Encoding | null,
): WholeAnswer {
  const fields: Record<string, string> = { ...p.fields };
  if (p.status === 200) fields['Accept-Ranges'] = 'bytes';
  if (encoding) {
    fields['Content-Encoding'] = encoding;
    // Weak: the bytes differ from the identity representation that the strong tag names.
    fields.ETag = `W/"${p.file.hash}"`;
  }
  fields['Content-Length'] = String(size);
  return { path, size, headers: Object.entries(fields).flat() };
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
