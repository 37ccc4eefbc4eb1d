import { createReadStream } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import type { S3State } from './state.ts';
import { tag } from './xml.ts';

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
export class FileBody {
  constructor(
    readonly path: string,
    readonly size: number,
  ) {}
}

/**
 * Sends the request `make` builds (through fetch, or `put` for a body that is a file), again
 * after a network error or a 5xx; other answers are returned.
 */
export async function send(
  s: S3State,
  what: string,
  make: () => Promise<RequestInit & { url: string }>,
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    let res: Response | undefined;
    let failure: unknown;
    // A request that cannot be made (a bad key) is not tried again.
    const { url, ...init } = await make();
    try {
      res = await (init.body instanceof FileBody ? put(s, url, init, init.body) : s.client.fetch(url, init));
      if (res.status < 500) return res;
      failure = new ObjectStorageError(res.status, await describe(s, what, res));
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
async function put(s: S3State, url: string, init: RequestInit, file: FileBody): Promise<Response> {
  const signed = await s.client.sign(url, { method: 'PUT', headers: init.headers ?? {} });
  const headers: Record<string, string> = { 'content-length': String(file.size) };
  signed.headers.forEach((value, name) => (headers[name] = value));
  const res = await request(url, { method: 'PUT', headers, body: createReadStream(file.path) });
  const text = await res.body.text();
  return new Response(text || null, { status: res.statusCode });
}

async function describe(s: S3State, what: string, res: Response): Promise<string> {
  const body = await res.text().catch(() => '');
  const code = tag(body, 'Code');
  const message = tag(body, 'Message');
  return `${what} in ${s.cfg.url}: ${res.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
}

/** Throws the answer's error, its body read for why (AccessDenied, NoSuchBucket). */
export async function fail(s: S3State, what: string, res: Response): Promise<never> {
  throw new ObjectStorageError(res.status, await describe(s, what, res));
}
