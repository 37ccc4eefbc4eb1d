import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseObjectStorage, type ObjectStorageConfig } from '../../server/storage/object-storage-url.ts';

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
  stop(): Promise<void>;
}

/**
 * Starts s3rver on 127.0.0.1 with one bucket (`slipway-test`, and `extraBuckets`), in a fresh
 * folder, behind a counting proxy. Its credentials are S3RVER / S3RVER.
 */
export async function startS3Server(extraBuckets: string[] = []): Promise<S3Server> {
  if (!S3rver) throw new Error('s3rver is not installed');
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
    async stop() {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
