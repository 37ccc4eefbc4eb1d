import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseObjectStorage,
  type ObjectStorageConfig,
} from '../../../server/platform/storage/object-storage-url.ts';
import { createS3BlobStore, ObjectStorageError } from '../../../server/platform/storage/s3-blob-store.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../../helpers/s3-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

describe.skipIf(Boolean(s3ServerMissing))(`the S3 blob store against s3rver${s3ServerMissing}`, () => {
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(() => s3?.stop());

  it('lists every key past the 1,000 of one page (continuation tokens), and only those under the prefix', async () => {
    const keys = Array.from({ length: 1001 }, (_, i) => `blobs/k${String(i).padStart(5, '0')}`);
    await s3.seed('many/', keys);
    const store = createS3BlobStore(s3.config('many/'));
    await store.putIfAbsent('other/outside', { bytes: 'not under the prefix' });
    const before = s3.requests.get('GET') ?? 0;
    const listed: string[] = [];
    for await (const o of store.list('blobs/')) listed.push(o.key);
    expect(listed.length).toBe(keys.length);
    expect(new Set(listed)).toEqual(new Set(keys));
    // Two pages: 1,000, then 1.
    expect((s3.requests.get('GET') ?? 0) - before).toBe(2);
  });
});

/**
 * A stand-in for a store with conditional writes (AWS S3, R2, MinIO): s3rver ignores
 * If-None-Match, so this server on 127.0.0.1 answers every HEAD 404 (not there yet, as when two
 * writers race) and every PUT with `status`, and records what the PUTs asked.
 */
async function conditionalStore(status: number): Promise<{
  config: ObjectStorageConfig;
  puts: IncomingHttpHeaders[];
  stop(): Promise<void>;
}> {
  const puts: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'PUT') {
        puts.push(req.headers);
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(
          status === 412
            ? '<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>'
            : '<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
        );
        return;
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const config = parseObjectStorage({
    SLIPWAY_OBJECT_STORAGE: `s3://bucket/p?endpoint=http://127.0.0.1:${port}&region=us-east-1`,
    SLIPWAY_OBJECT_STORAGE_KEY_ID: 'key',
    SLIPWAY_OBJECT_STORAGE_SECRET: 'secret',
  }) as ObjectStorageConfig;
  return {
    config,
    puts,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('the S3 blob store’s conditional put', () => {
  it('takes 412 (the key exists: another writer won) as "already there", for bytes and for a file', async () => {
    const server = await conditionalStore(412);
    try {
      const store = createS3BlobStore(server.config);
      expect(await store.putIfAbsent('blobs/aa/one', { bytes: 'one' })).toBe(false);
      const dir = tempDir({ 'f.txt': 'from a file' });
      expect(await store.putIfAbsent('blobs/aa/two', { file: join(dir, 'f.txt') })).toBe(false);
      expect(server.puts.map((h) => h['if-none-match'])).toEqual(['*', '*']);
    } finally {
      await server.stop();
    }
  });

  it('still fails on a refusal that is not a precondition (403)', async () => {
    const server = await conditionalStore(403);
    try {
      const store = createS3BlobStore(server.config);
      const put = store.putIfAbsent('blobs/aa/one', { bytes: 'one' });
      await expect(put).rejects.toBeInstanceOf(ObjectStorageError);
      await expect(put).rejects.toThrow(/PUT blobs\/aa\/one in s3:\/\/bucket\/p.*: 403 AccessDenied/);
    } finally {
      await server.stop();
    }
  });
});
