import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkKey, hashKey, type BlobStore } from '../../../server/platform/storage/blob-store.ts';
import { createLocalBlobStore } from '../../../server/platform/storage/local-blob-store.ts';
import { createS3BlobStore } from '../../../server/platform/storage/s3-blob-store.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../../helpers/s3-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** The same checks against each implementation: what the artifacts, uploads and the edge rely on. */
function contract(name: string, skip: string, open: () => BlobStore) {
  describe.skipIf(Boolean(skip))(`${name} blob store${skip}`, () => {
    it('writes an object once: a second put of the key keeps the first and says it did not write', async () => {
      const store = open();
      const key = hashKey('blobs', sha('one'));
      expect(await store.putIfAbsent(key, { bytes: 'one' })).toBe(true);
      expect(await store.putIfAbsent(key, { bytes: 'two' })).toBe(false);
      expect((await store.read(key))?.toString()).toBe('one');
      expect(await store.head(key)).toMatchObject({ size: 3 });
    });

    it('stores a file, and reads it whole, as a stream and by byte range', async () => {
      const store = open();
      const dir = tempDir({ 'page.html': '<h1>hello, object storage</h1>' });
      const key = hashKey('blobs', sha('<h1>hello, object storage</h1>'));
      expect(await store.putIfAbsent(key, { file: join(dir, 'page.html') })).toBe(true);
      // The caller's file is left as it was (it removes it itself when it may be moved).
      expect(readFileSync(join(dir, 'page.html'), 'utf8')).toBe('<h1>hello, object storage</h1>');
      expect(await text((await store.stream(key))!)).toBe('<h1>hello, object storage</h1>');
      expect(await text((await store.stream(key, { start: 4, end: 8 }))!)).toBe('hello');
    });

    it('answers null for a key that is not there, and deleting one is not an error', async () => {
      const store = open();
      const key = 'manifests/art_missingmissingmissi.json';
      expect(await store.read(key)).toBeNull();
      expect(await store.stream(key)).toBeNull();
      expect(await store.head(key)).toBeNull();
      await store.delete(key);
    });

    it('lists by prefix with sizes, and a deleted object is gone from reads and lists', async () => {
      const store = open();
      await store.putIfAbsent('uploads/aa/x1', { bytes: 'a' });
      await store.putIfAbsent('uploads/ab/x2', { bytes: 'bb' });
      await store.putIfAbsent('manifests/m1.json', { bytes: '{}' });
      const listed = async (prefix: string) => {
        const out: [string, number][] = [];
        for await (const o of store.list(prefix)) out.push([o.key, o.size]);
        return out.sort();
      };
      expect(await listed('uploads/')).toEqual([
        ['uploads/aa/x1', 1],
        ['uploads/ab/x2', 2],
      ]);
      expect(await listed('uploads/aa')).toEqual([['uploads/aa/x1', 1]]);
      await store.delete('uploads/aa/x1');
      expect(await store.read('uploads/aa/x1')).toBeNull();
      expect(await listed('uploads/')).toEqual([['uploads/ab/x2', 2]]);
    });

    it('touches an object: its modified time moves to now, its bytes stay; false for one that is not there', async () => {
      const store = open();
      const key = 'build-cache/prj_touch/x.json';
      await store.putIfAbsent(key, { bytes: 'kept as it was' });
      const before = (await store.head(key))!.modifiedAt.getTime();
      // S3 keeps times to the second: the touch must land in a later second to be seen.
      const later = Math.floor(before / 1000) * 1000 + 1000;
      while (Date.now() < later) await new Promise((r) => setTimeout(r, later - Date.now()));
      expect(await store.touch(key)).toBe(true);
      expect((await store.head(key))!.modifiedAt.getTime()).toBeGreaterThanOrEqual(later);
      expect((await store.read(key))?.toString()).toBe('kept as it was');
      const listed: number[] = [];
      for await (const o of store.list('build-cache/prj_touch/')) listed.push(o.modifiedAt.getTime());
      expect(listed).toEqual([expect.any(Number)]);
      expect(listed[0]).toBeGreaterThanOrEqual(later);
      expect(await store.touch('build-cache/prj_touch/missing.json')).toBe(false);
    });

    it('keeps every concurrent writer of one content-addressed key whole', async () => {
      const store = open();
      const body = 'x'.repeat(300_000);
      const key = hashKey('blobs', sha(body));
      const wrote = await Promise.all(
        Array.from({ length: 6 }, () => store.putIfAbsent(key, { bytes: body })),
      );
      expect(wrote).toContain(true);
      expect((await store.read(key))?.toString()).toBe(body);
    });

    it('refuses keys that could leave its folder or prefix', async () => {
      const store = open();
      for (const bad of ['../x', '/etc/passwd', 'a//b', 'Blobs/x', 'a/../b', '']) {
        await expect(store.putIfAbsent(bad, { bytes: 'x' })).rejects.toThrow(/Not a blob key/);
        await expect(store.read(bad)).rejects.toThrow(/Not a blob key/);
      }
      expect(checkKey('blobs/ab/cd')).toBe('blobs/ab/cd');
    });
  });
}

let s3: S3Server | undefined;
let prefixes = 0;
beforeAll(async () => {
  if (!s3ServerMissing) s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.stop();
});

contract('local-directory', '', () => createLocalBlobStore(tempDir()));
// A prefix per test: each starts with an empty store, as the local ones do.
contract('S3 (s3rver)', s3ServerMissing, () => createS3BlobStore(s3!.config(`t${++prefixes}`)));

describe('local-directory layout', () => {
  it('keeps the artifacts directory as it was: each key is the file of that path, and nothing is left in tmp', async () => {
    const root = tempDir();
    const store = createLocalBlobStore(root);
    const src = join(tempDir(), 'f');
    writeFileSync(src, 'moved');
    await store.putIfAbsent('uploads/ab/cd', { file: src, move: true });
    expect(readFileSync(join(root, 'uploads', 'ab', 'cd'), 'utf8')).toBe('moved');
    expect(store.localPath!('uploads/ab/cd')).toBe(join(root, 'uploads', 'ab', 'cd'));
    expect(existsSync(join(root, 'tmp')) ? readdirSync(join(root, 'tmp')) : []).toEqual([]);
  });
});
