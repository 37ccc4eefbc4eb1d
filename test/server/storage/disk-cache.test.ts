import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../../server/platform/storage/blob-store.ts';
import { createLocalBlobStore } from '../../../server/platform/storage/local-blob-store.ts';
import { createDiskCache } from '../../../server/platform/storage/local-files.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/** A local store standing in for a remote one: no local paths, and its reads counted. */
function remoteStore(): BlobStore & { streams: string[]; failNext?: boolean } {
  const inner = createLocalBlobStore(tempDir());
  const store: BlobStore & { streams: string[]; failNext?: boolean } = {
    location: 's3://test',
    streams: [],
    putIfAbsent: (k, b) => inner.putIfAbsent(k, b),
    read: (k) => inner.read(k),
    head: (k) => inner.head(k),
    list: (p) => inner.list(p),
    delete: (k) => inner.delete(k),
    touch: (k) => inner.touch(k),
    async stream(key, range) {
      store.streams.push(key);
      if (store.failNext) {
        store.failNext = false;
        // Half the bytes, then the connection drops.
        return Readable.from(
          (async function* () {
            yield Buffer.from('half');
            throw new Error('connection reset');
          })(),
        );
      }
      return inner.stream(key, range);
    },
  };
  return store;
}

describe('edge disk cache', () => {
  it('fetches a cold object once however many ask at once, then serves it from disk', async () => {
    const store = remoteStore();
    await store.putIfAbsent('blobs/aa/one', { bytes: 'first bytes' });
    const cache = await createDiskCache(store, { dir: tempDir(), maxBytes: 1024 });
    const results = await Promise.all(Array.from({ length: 5 }, async () => cache.ensure('blobs/aa/one')));
    expect(results).toEqual([true, true, true, true, true]);
    expect(store.streams).toEqual(['blobs/aa/one']);
    expect(readFileSync(cache.path('blobs/aa/one'), 'utf8')).toBe('first bytes');
    // Warm: nothing to wait for, no request to the store.
    expect(cache.ensure('blobs/aa/one')).toBeUndefined();
    expect(store.streams).toHaveLength(1);
    expect(cache.cachedBytes()).toBe(11);
  });

  it('says false for an object the store does not have, and asks again next time', async () => {
    const store = remoteStore();
    const cache = await createDiskCache(store, { dir: tempDir(), maxBytes: 1024 });
    expect(await cache.ensure('blobs/aa/none')).toBe(false);
    await store.putIfAbsent('blobs/aa/none', { bytes: 'late' });
    expect(await cache.ensure('blobs/aa/none')).toBe(true);
  });

  it('never leaves a half-fetched file where it is read', async () => {
    const store = remoteStore();
    const dir = tempDir();
    await store.putIfAbsent('blobs/aa/two', { bytes: 'whole content' });
    const cache = await createDiskCache(store, { dir, maxBytes: 1024 });
    store.failNext = true;
    await expect(cache.ensure('blobs/aa/two')!).rejects.toThrow(/connection reset/);
    expect(existsSync(cache.path('blobs/aa/two'))).toBe(false);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    expect(await cache.ensure('blobs/aa/two')).toBe(true);
    expect(readFileSync(cache.path('blobs/aa/two'), 'utf8')).toBe('whole content');
  });

  it('keeps at most maxBytes on disk, the least recently used removed first', async () => {
    const store = remoteStore();
    for (const k of ['a', 'b', 'c']) await store.putIfAbsent(`blobs/aa/${k}`, { bytes: k.repeat(40) });
    const cache = await createDiskCache(store, { dir: tempDir(), maxBytes: 100 });
    await cache.ensure('blobs/aa/a');
    await cache.ensure('blobs/aa/b');
    expect(cache.ensure('blobs/aa/a')).toBeUndefined(); // a is now the most recent
    await cache.ensure('blobs/aa/c'); // 120 bytes: b goes
    expect(existsSync(cache.path('blobs/aa/b'))).toBe(false);
    expect(existsSync(cache.path('blobs/aa/a'))).toBe(true);
    expect(existsSync(cache.path('blobs/aa/c'))).toBe(true);
    expect(cache.cachedBytes()).toBe(80);
  });

  it('counts what is already on disk when it starts: a restarted edge is still warm', async () => {
    const store = remoteStore();
    const dir = tempDir();
    await store.putIfAbsent('manifests/art_x.json', { bytes: '{}' });
    await (await createDiskCache(store, { dir, maxBytes: 1024 })).ensure('manifests/art_x.json');
    const again = await createDiskCache(store, { dir, maxBytes: 1024 });
    expect(again.ensure('manifests/art_x.json')).toBeUndefined();
    expect(store.streams).toHaveLength(1);
    expect(again.cachedBytes()).toBe(2);
  });
});
