import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseObjectStorage,
  type ObjectStorageConfig,
} from '../../server/platform/storage/object-storage-url.ts';

/**
 * s3rver (npm, a devDependency) is the S3-compatible server the object-storage tests run against:
 * it runs in Node on this machine with nothing to download, and serves what the blob store uses
 * (PUT, GET with Range, HEAD, DELETE, ListObjectsV2, SigV4). It ignores `If-None-Match` on PUT,
 * so the tests exercise the HEAD-then-PUT path (see s3-blob-store.ts). Null when it is not installed.
 */
const S3rver = await import('s3rver').then(
  (m) => m.default,
  () => null,
);

/**
 * s3rver makes its ListObjectsV2 continuation tokens with single DES, which OpenSSL 3 (Node 17
 * and later) no longer has: a listing longer than a page (1,000 keys) was answered 500. Triple
 * DES with the one key three times is the same cipher, and OpenSSL 3 has it: s3rver's calls
 * for `des` are given that (nothing else asks for `des`).
 */
function desAsTripleDes() {
  const { createCipheriv, createDecipheriv } = crypto;
  if ((createCipheriv as { desShim?: true }).desShim) return;
  const key3 = (key: crypto.CipherKey) => {
    const k = Buffer.from(key as Buffer);
    return Buffer.concat([k, k, k]);
  };
  type Args = Parameters<typeof createCipheriv>;
  const cipher = (...args: Args) =>
    args[0] === 'des' ? createCipheriv('des-ede3-cbc', key3(args[1]), args[2]) : createCipheriv(...args);
  const decipher = (...args: Parameters<typeof createDecipheriv>) =>
    args[0] === 'des' ? createDecipheriv('des-ede3-cbc', key3(args[1]), args[2]) : createDecipheriv(...args);
  Object.assign(cipher, { desShim: true });
  crypto.createCipheriv = cipher as typeof createCipheriv;
  crypto.createDecipheriv = decipher as typeof createDecipheriv;
}

export const s3ServerMissing = S3rver ? '' : ' (skipped: s3rver is not installed; npm ci installs it)';

export interface S3Server {
  /** `http://127.0.0.1:PORT`, through a proxy that counts requests. */
  endpoint: string;
  bucket: string;
  /** The variables a Slipway process needs to use the bucket under `prefix`. */
  env(prefix?: string): Record<string, string>;
  /** The parsed setting, for the blob store itself. */
  config(prefix?: string): ObjectStorageConfig;
  /** Requests received so far, by method (`GET`, `PUT`, ...). */
  requests: Map<string, number>;
  /**
   * Writes objects (each holding its key) straight into s3rver's store, with no request: for
   * tests that need many of them (a listing past one page), which one PUT each would take tens
   * of seconds to write on a loaded machine.
   */
  seed(prefix: string, keys: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts s3rver on 127.0.0.1 with one bucket (`slipway-test`, and `extraBuckets`), in a fresh
 * folder, behind a counting proxy. Its credentials are S3RVER / S3RVER.
 */
export async function startS3Server(extraBuckets: string[] = []): Promise<S3Server> {
  if (!S3rver) throw new Error('s3rver is not installed');
  desAsTripleDes();
  const dir = mkdtempSync(join(tmpdir(), 'slipway-s3-'));
  const bucket = 'slipway-test';
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [bucket, ...extraBuckets].map((name) => ({ name })),
  });
  const { port } = await server.run();
  const requests = new Map<string, number>();
  const proxy: Server = createServer((req, res) => {
    requests.set(req.method!, (requests.get(req.method!) ?? 0) + 1);
    const out = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const address = proxy.address();
  const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const env = (prefix = '') => ({
    SLIPWAY_OBJECT_STORAGE: `s3://${bucket}/${prefix}?endpoint=${endpoint}&region=us-east-1`,
    // s3rver's fixed credentials.
    SLIPWAY_OBJECT_STORAGE_KEY_ID: 'S3RVER',
    SLIPWAY_OBJECT_STORAGE_SECRET: 'S3RVER',
  });
  return {
    endpoint,
    bucket,
    env,
    config: (prefix) => parseObjectStorage(env(prefix)) as ObjectStorageConfig,
    requests,
    async seed(prefix, keys) {
      // s3rver's own store and object model (s3rver 3), as its PUT handler uses them.
      const { default: S3Object } = await import('s3rver/lib/models/object.js');
      const store = (server as unknown as { store: { putObject(o: unknown): Promise<unknown> } }).store;
      for (let i = 0; i < keys.length; i += 50) {
        const batch = keys.slice(i, i + 50);
        await Promise.all(
          batch.map((k) => store.putObject(new S3Object(bucket, prefix + k, Buffer.from(k), {}))),
        );
      }
    },
    async stop() {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
