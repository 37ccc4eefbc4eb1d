import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createArtifactStore } from '../../../server/features/builds/artifacts.ts';
import { createArtifactReader } from '../../../server/features/serving/edge/artifact-reader.ts';
import { createBlobCache } from '../../../server/features/serving/edge/blob-cache.ts';
import { createCompressedCache } from '../../../server/features/serving/edge/compression.ts';
import { createStaticServer } from '../../../server/features/serving/edge/static.ts';
import type { Target } from '../../../server/features/serving/edge/resolve-host.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const limits = { maxBytes: 1024 * 1024, maxFiles: 100 };

/** GETs a path from a server on 127.0.0.1; resolves with status, headers and body. */
function get(server: Server, path: string, headers: Record<string, string> = {}) {
  const { port } = server.address() as AddressInfo;
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      request({ host: '127.0.0.1', port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
        .on('error', reject)
        .end();
    },
  );
}

describe('edge fast path', () => {
  it('answers a warm request within the same turn, and the same bytes and headers as a cold one', async () => {
    const root = tempDir();
    const site = tempDir({ 'index.html': '<h1>hi</h1>', 'big.txt': 'x'.repeat(4096) });
    const { artifactId } = await createArtifactStore(root).storeDirectory(site, limits);
    const compressed = createCompressedCache(root);
    const files = createStaticServer({ artifacts: createArtifactReader(root), compressed });
    const target: Target = {
      projectId: 'prj_1',
      deploymentId: 'dpl_1',
      artifactId,
      kind: 'static',
      spa: false,
      environment: 'production',
    };
    const answeredAtOnce: boolean[] = [];
    const server = createServer((req, res) => {
      const pending = files.serve(req, res, target, { bytes: 0 });
      answeredAtOnce.push(pending === undefined && res.writableEnded);
      void pending;
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));

    const cold = await get(server, '/');
    const warm = await get(server, '/');
    expect(answeredAtOnce).toEqual([false, true]);
    expect(warm.status).toBe(200);
    expect(warm.body.toString()).toBe('<h1>hi</h1>');
    const { date: _a, ...coldHeaders } = cold.headers;
    const { date: _b, ...warmHeaders } = warm.headers;
    expect(warmHeaders).toEqual(coldHeaders);

    // The first request that asks for a compressed copy queues it and gets the file as it is;
    // once made, the copy is in memory too.
    const gzCold = await get(server, '/big.txt', { 'accept-encoding': 'gzip' });
    expect(gzCold.headers['content-encoding']).toBeUndefined();
    // Already queued: this waits for that copy (the blob's name is its SHA-256).
    await compressed.get(createHash('sha256').update('x'.repeat(4096)).digest('hex'), '', 0, 'gzip');
    const gzWarm = await get(server, '/big.txt', { 'accept-encoding': 'gzip' });
    const gzWarmer = await get(server, '/big.txt', { 'accept-encoding': 'gzip' });
    expect(answeredAtOnce.slice(2)).toEqual([false, false, true]);
    expect(gzWarm.headers['content-encoding']).toBe('gzip');
    expect(gzWarmer.headers.etag).toBe(gzWarm.headers.etag);
    expect(gzWarmer.body.equals(gzWarm.body)).toBe(true);
    expect(gzWarm.body.length).toBeLessThan(4096);

    // A range of a warm file is cut from memory (the identity bytes, which the cold gzip request
    // loaded when it was sent the file as it is).
    expect((await get(server, '/big.txt')).body.length).toBe(4096);
    expect(answeredAtOnce.at(-1)).toBe(true);
    const range = await get(server, '/big.txt', { range: 'bytes=10-19' });
    expect(answeredAtOnce.at(-1)).toBe(true);
    expect(range.status).toBe(206);
    expect(range.body.toString()).toBe('x'.repeat(10));
  });

  it('peeks only what has loaded', async () => {
    const root = tempDir();
    const site = tempDir({ 'a.txt': 'a'.repeat(2048) });
    const { artifactId } = await createArtifactStore(root).storeDirectory(site, limits);

    const reader = createArtifactReader(root);
    expect(reader.peek(artifactId)).toBeUndefined();
    const loading = reader.manifest(artifactId);
    expect(reader.peek(artifactId)).toBeUndefined();
    const manifest = await loading;
    expect(reader.peek(artifactId)).toBe(manifest);
    // A missing artifact is not remembered, so it is found once the builder writes it.
    await reader.manifest('art_missing00000000000');
    expect(reader.peek('art_missing00000000000')).toBeUndefined();

    const hash = manifest!.files['/a.txt']!.hash;
    const blobs = createBlobCache({ maxEntryBytes: 4096 });
    expect(blobs.peek(reader.blobPath(hash))).toBeUndefined();
    const bytes = await blobs.read(reader.blobPath(hash));
    expect(blobs.peek(reader.blobPath(hash))).toBe(bytes);

    const compressed = createCompressedCache(root);
    expect(compressed.peek(hash, 'gzip')).toBeUndefined();
    const copy = await compressed.get(hash, reader.blobPath(hash), 2048, 'gzip');
    expect(copy?.size).toBeLessThan(2048);
    expect(compressed.peek(hash, 'gzip')).toEqual(copy);
    expect(compressed.peek(hash, 'br')).toBeUndefined();
  });

  it('keeps blobs up to maxBytes in all, the least recently used out first, and no file over maxEntryBytes', async () => {
    const dir = tempDir({
      a: 'a'.repeat(1000),
      b: 'b'.repeat(1000),
      c: 'c'.repeat(1000),
      big: 'x'.repeat(2000),
    });
    const blobs = createBlobCache({ maxBytes: 2500, maxEntryBytes: 1500 });
    const [a, b, c, big] = ['a', 'b', 'c', 'big'].map((f) => join(dir, f));
    await blobs.read(a!);
    await blobs.read(b!);
    expect(blobs.peek(a!)).toBeDefined(); // a is now the most recently used
    await blobs.read(c!);
    expect([blobs.peek(a!), blobs.peek(b!), blobs.peek(c!)].map((x) => x?.length)).toEqual([
      1000,
      undefined,
      1000,
    ]);
    expect((await blobs.read(big!)).length).toBe(2000);
    expect(blobs.peek(big!)).toBeUndefined();
    expect(blobs.peek(a!)).toBeDefined();
    await expect(blobs.read(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps manifests up to maxBytes as stored, the least recently used out first', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const ids: string[] = [];
    for (const content of ['x', 'y', 'z']) {
      ids.push((await store.storeDirectory(tempDir({ 'f.txt': content }), limits)).artifactId);
    }
    const [x, y, z] = ids as [string, string, string];
    // Room for two of the three (same length each: one file, same-length ids), not for three.
    const size = statSync(join(root, 'manifests', `${x}.json`)).size;
    const reader = createArtifactReader(root, { maxBytes: 2 * size + 1 });
    const [mx, my] = await Promise.all([reader.manifest(x), reader.manifest(y)]);
    expect(reader.peek(x)).toBe(mx); // x is now the most recently used
    await reader.manifest(z);
    expect(reader.peek(y)).toBeUndefined();
    expect(reader.peek(x)).toBe(mx);
    expect(reader.peek(z)).toBeDefined();
    // Read again from disk when asked.
    expect(await reader.manifest(y)).toEqual(my);
  });
});
