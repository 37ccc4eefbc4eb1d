import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { BlobBody, BlobInfo } from '../blob-store.ts';
import { fail, FileBody, send } from './send.ts';
import { urlOf, type S3State } from './state.ts';
import { parseListing } from './xml.ts';

export async function head(s: S3State, key: string): Promise<BlobInfo | null> {
  const res = await send(s, `HEAD ${key}`, async () => ({ url: urlOf(s, key), method: 'HEAD' }));
  if (res.status === 404) return null;
  if (!res.ok) return fail(s, `HEAD ${key}`, res);
  return {
    size: Number(res.headers.get('content-length') ?? 0),
    modifiedAt: new Date(res.headers.get('last-modified') ?? 0),
  };
}

async function requestBody(body: BlobBody): Promise<Buffer | FileBody> {
  if ('bytes' in body) return typeof body.bytes === 'string' ? Buffer.from(body.bytes) : body.bytes;
  return new FileBody(body.file, (await stat(body.file)).size);
}

async function get(
  s: S3State,
  key: string,
  range?: { start: number; end: number },
): Promise<Response | null> {
  const headers: Record<string, string> = range ? { Range: `bytes=${range.start}-${range.end}` } : {};
  const res = await send(s, `GET ${key}`, async () => ({ url: urlOf(s, key), headers }));
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) return fail(s, `GET ${key}`, res);
  return res;
}

export async function putIfAbsent(s: S3State, key: string, body: BlobBody): Promise<boolean> {
  if (await head(s, key)) return false;
  const res = await send(s, `PUT ${key}`, async () => ({
    url: urlOf(s, key),
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
  if (!res.ok) return fail(s, `PUT ${key}`, res);
  await res.body?.cancel();
  return true;
}

export async function read(s: S3State, key: string): Promise<Buffer | null> {
  const res = await get(s, key);
  return res ? Buffer.from(await res.arrayBuffer()) : null;
}

export async function stream(
  s: S3State,
  key: string,
  range?: { start: number; end: number },
): Promise<Readable | null> {
  const res = await get(s, key, range);
  if (!res?.body) return res ? Readable.from([]) : null;
  return Readable.fromWeb(res.body);
}

export function list(s: S3State, prefix: string): AsyncIterable<BlobInfo & { key: string }> {
  const base = `${s.cfg.bucketUrl}?list-type=2&prefix=${encodeURIComponent(s.cfg.prefix + prefix)}`;
  return pages(s, prefix, base, s.cfg.prefix.length);
}

/** The listing's pages, one request each, with the store's prefix (`strip` characters) cut off the keys. */
async function* pages(s: S3State, prefix: string, base: string, strip: number) {
  let token: string | undefined;
  do {
    const url = token ? `${base}&continuation-token=${encodeURIComponent(token)}` : base;
    const res = await send(s, `LIST ${prefix}`, async () => ({ url }));
    if (!res.ok) await fail(s, `LIST ${prefix}`, res);
    const page = parseListing(await res.text());
    for (const o of page.objects) yield { ...o, key: o.key.slice(strip) };
    token = page.next;
  } while (token);
}

export async function remove(s: S3State, key: string): Promise<void> {
  const res = await send(s, `DELETE ${key}`, async () => ({ url: urlOf(s, key), method: 'DELETE' }));
  await res.body?.cancel();
  if (!res.ok && res.status !== 404) await fail(s, `DELETE ${key}`, res);
}

export async function touch(s: S3State, key: string): Promise<boolean> {
  // Written again, same bytes: a copy onto itself would do on AWS S3, but not every store
  // moves LastModified for it (s3rver does not). Only small objects are touched.
  const res = await get(s, key);
  if (!res) return false;
  const bytes = Buffer.from(await res.arrayBuffer());
  const put = await send(s, `PUT ${key}`, async () => ({
    url: urlOf(s, key),
    method: 'PUT',
    body: bytes as unknown as RequestInit['body'],
  }));
  await put.body?.cancel();
  if (!put.ok) return fail(s, `PUT ${key}`, put);
  return true;
}
