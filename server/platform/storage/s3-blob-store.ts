import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { AwsClient } from 'aws4fetch';
import { request } from 'undici';
import { checkAnyCaseKey, checkKey, type BlobBody, type BlobStore } from './blob-store.ts';
import type { ObjectStorageConfig } from './object-storage-url.ts';

/** Tries of one request that failed on the network or with a 5xx (throttling included). */
const TRIES = 4;

/** A failed request to the object store, naming what was asked and what it answered. */
export class ObjectStorageError extends Error {
  override name = 'ObjectStorageError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A file to PUT, opened on each try. */
class FileBody {
  constructor(
    readonly path: string,
    readonly size: number,
  ) {}
}

/** Unescapes the five XML entities (keys and tokens in a listing). */
function xmlText(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp);/g, (_m, e: string) =>
    e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'apos' ? "'" : '&',
  );
}

function tag(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? xmlText(m[1]!) : undefined;
}

/** One page of ListObjectsV2: its objects and the token of the next page, if any. */
export function parseListing(xml: string): {
  objects: { key: string; size: number; modifiedAt: Date }[];
  next?: string;
} {
  const objects = [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)].map(([, body]) => ({
    key: tag(body!, 'Key') ?? '',
    size: Number(tag(body!, 'Size') ?? 0),
    modifiedAt: new Date(tag(body!, 'LastModified') ?? 0),
  }));
  const next = tag(xml, 'IsTruncated') === 'true' ? tag(xml, 'NextContinuationToken') : undefined;
  return next ? { objects, next } : { objects };
}

/**
 * A blob store in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Garage, Ceph), signed
 * with SigV4 (aws4fetch) over Node's fetch. An object appears whole or not at all (S3's PUT), so
 * a reader never sees half of one. Writes send `If-None-Match: *`, which stores that have
 * conditional writes (AWS S3, R2, MinIO) refuse with 412 when the key exists; stores that ignore
 * it (s3rver, older ones) get a HEAD first, which is enough because every key names its content
 * or a fresh id: a second writer of a key writes the same bytes.
 */
export function createS3BlobStore(cfg: ObjectStorageConfig, opts: { anyCase?: boolean } = {}): BlobStore {
  const check = opts.anyCase ? checkAnyCaseKey : checkKey;
  const client = new AwsClient({
    accessKeyId: cfg.accessKeyId,
    secretAccessKey: cfg.secretAccessKey,
    ...(cfg.sessionToken ? { sessionToken: cfg.sessionToken } : {}),
    service: 's3',
    region: cfg.region,
    // Retried here, where a file's body can be opened again.
    retries: 0,
  });
  const urlOf = (key: string) => `${cfg.bucketUrl}${cfg.prefix}${check(key)}`;

  /**
   * Sends the request `make` builds (through fetch, or `put` for a body that is a file), again
   * after a network error or a 5xx; other answers are returned.
   */
  async function send(what: string, make: () => Promise<RequestInit & { url: string }>): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      let res: Response | undefined;
      let failure: unknown;
      // A request that cannot be made (a bad key) is not tried again.
      const { url, ...init } = await make();
      try {
        res = await (init.body instanceof FileBody ? put(url, init, init.body) : client.fetch(url, init));
        if (res.status < 500) return res;
        failure = new ObjectStorageError(res.status, await describe(what, res));
      } catch (err) {
        failure = err;
      }
      if (attempt >= TRIES) throw failure;
      await delay(100 * 2 ** attempt);
    }
  }

  /**
   * PUTs a file as a stream with its length: Node's fetch will not send a Content-Length with a
   * stream, and S3 refuses a PUT without one. Signed like any other (UNSIGNED-PAYLOAD).
   */
  async function put(url: string, init: RequestInit, file: FileBody): Promise<Response> {
    const signed = await client.sign(url, { method: 'PUT', headers: init.headers ?? {} });
    const headers: Record<string, string> = { 'content-length': String(file.size) };
    signed.headers.forEach((value, name) => (headers[name] = value));
    const res = await request(url, { method: 'PUT', headers, body: createReadStream(file.path) });
    const text = await res.body.text();
    return new Response(text || null, { status: res.statusCode });
  }

  async function describe(what: string, res: Response): Promise<string> {
    const body = await res.text().catch(() => '');
    const code = tag(body, 'Code');
    const message = tag(body, 'Message');
    return `${what} in ${cfg.url}: ${res.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
  }

  async function fail(what: string, res: Response): Promise<never> {
    throw new ObjectStorageError(res.status, await describe(what, res));
  }

  async function head(key: string) {
    const res = await send(`HEAD ${key}`, async () => ({ url: urlOf(key), method: 'HEAD' }));
    if (res.status === 404) return null;
    if (!res.ok) return fail(`HEAD ${key}`, res);
    return {
      size: Number(res.headers.get('content-length') ?? 0),
      modifiedAt: new Date(res.headers.get('last-modified') ?? 0),
    };
  }

  async function requestBody(body: BlobBody): Promise<Buffer | FileBody> {
    if ('bytes' in body) return typeof body.bytes === 'string' ? Buffer.from(body.bytes) : body.bytes;
    return new FileBody(body.file, (await stat(body.file)).size);
  }

  async function get(key: string, range?: { start: number; end: number }): Promise<Response | null> {
    const headers: Record<string, string> = range ? { Range: `bytes=${range.start}-${range.end}` } : {};
    const res = await send(`GET ${key}`, async () => ({ url: urlOf(key), headers }));
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) return fail(`GET ${key}`, res);
    return res;
  }

  return {
    location: cfg.url,

    async putIfAbsent(key, body) {
      if (await head(key)) return false;
      const res = await send(`PUT ${key}`, async () => ({
        url: urlOf(key),
        method: 'PUT',
        body: (await requestBody(body)) as unknown as RequestInit['body'],
        headers: { 'If-None-Match': '*' },
      }));
      // 412 (precondition failed: the key exists): written by another in the meantime; 409:
      // another's write of it is under way. Either way it is there, whole, or about to be.
      if (res.status === 412 || res.status === 409) {
        await res.body?.cancel();
        return false;
      }
      // The body read for the error: it says why (AccessDenied, NoSuchBucket).
      if (!res.ok) return fail(`PUT ${key}`, res);
      await res.body?.cancel();
      return true;
    },

    async read(key) {
      const res = await get(key);
      return res ? Buffer.from(await res.arrayBuffer()) : null;
    },

    async stream(key, range) {
      const res = await get(key, range);
      if (!res?.body) return res ? Readable.from([]) : null;
      return Readable.fromWeb(res.body);
    },

    head,

    list(prefix) {
      const base = `${cfg.bucketUrl}?list-type=2&prefix=${encodeURIComponent(cfg.prefix + prefix)}`;
      const strip = cfg.prefix.length;
      return (async function* () {
        let token: string | undefined;
        do {
          const url = token ? `${base}&continuation-token=${encodeURIComponent(token)}` : base;
          const res = await send(`LIST ${prefix}`, async () => ({ url }));
          if (!res.ok) await fail(`LIST ${prefix}`, res);
          const page = parseListing(await res.text());
          for (const o of page.objects) yield { ...o, key: o.key.slice(strip) };
          token = page.next;
        } while (token);
      })();
    },

    async delete(key) {
      const res = await send(`DELETE ${key}`, async () => ({ url: urlOf(key), method: 'DELETE' }));
      await res.body?.cancel();
      if (!res.ok && res.status !== 404) await fail(`DELETE ${key}`, res);
    },

    async touch(key) {
      // Written again, same bytes: a copy onto itself would do on AWS S3, but not every store
      // moves LastModified for it (s3rver does not). Only small objects are touched.
      const res = await get(key);
      if (!res) return false;
      const bytes = Buffer.from(await res.arrayBuffer());
      const put = await send(`PUT ${key}`, async () => ({
        url: urlOf(key),
        method: 'PUT',
        body: bytes as unknown as RequestInit['body'],
      }));
      await put.body?.cancel();
      if (!put.ok) return fail(`PUT ${key}`, put);
      return true;
    },
  };
}
