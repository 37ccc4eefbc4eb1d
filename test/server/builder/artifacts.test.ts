import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createArtifactStore } from '../../../server/features/builds/artifacts.ts';
import { BuildError } from '../../../server/platform/sandbox/build-error.ts';
import { createArtifactReader } from '../../../server/features/serving/edge/artifact-reader.ts';
import { createMaterializer } from '../../../server/features/serving/edge/materialize.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const limits = { maxBytes: 1024 * 1024, maxFiles: 1000 };

/** Every blob file under <root>/blobs. */
const blobs = (root: string) =>
  readdirSync(join(root, 'blobs')).flatMap((prefix) =>
    readdirSync(join(root, 'blobs', prefix)).map((b) => `${prefix}/${b}`),
  );

describe('artifact store', () => {
  it('stores each file as a blob and writes the manifest in the agreed format', async () => {
    const root = tempDir();
    const store = createArtifactStore(root, { now: () => new Date('2026-11-22T10:00:00.000Z') });
    const site = tempDir({
      'index.html': '<h1>hi</h1>',
      'assets/app.js': 'console.log(1)',
      'assets/empty.txt': '',
    });

    const stored = await store.storeDirectory(site, limits);
    expect(stored.artifactId).toMatch(/^art_[a-z0-9]{20}$/);
    expect(stored).toMatchObject({ fileCount: 3, totalBytes: 11 + 14 });

    const onDisk = JSON.parse(readFileSync(join(root, 'manifests', `${stored.artifactId}.json`), 'utf8'));
    expect(onDisk).toEqual({
      id: stored.artifactId,
      createdAt: '2026-11-22T10:00:00.000Z',
      totalBytes: 25,
      files: {
        '/assets/app.js': { hash: sha('console.log(1)'), size: 14 },
        '/assets/empty.txt': { hash: sha(''), size: 0 },
        '/index.html': { hash: sha('<h1>hi</h1>'), size: 11 },
      },
    });
    const hash = sha('<h1>hi</h1>');
    expect(store.blobPath(hash)).toBe(join(root, 'blobs', hash.slice(0, 2), hash));
    expect(readFileSync(store.blobPath(hash), 'utf8')).toBe('<h1>hi</h1>');
    expect(await store.readManifest(stored.artifactId)).toEqual(onDisk);
    // Nothing is left behind in the temporary directory.
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });

  it('stores identical content once, within and across artifacts', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const a = await store.storeDirectory(
      tempDir({ 'a.txt': 'same', 'b.txt': 'same', 'c.txt': 'one' }),
      limits,
    );
    const b = await store.storeDirectory(tempDir({ 'x/a.txt': 'same', 'd.txt': 'two' }), limits);
    expect(a.artifactId).not.toBe(b.artifactId);
    expect(blobs(root).sort()).toEqual(
      [sha('same'), sha('one'), sha('two')].map((h) => `${h.slice(0, 2)}/${h}`).sort(),
    );
  });

  it('leaves symbolic links and excluded paths out', async () => {
    const outside = tempDir({ 'secret.txt': 'do not publish' });
    const site = tempDir({ 'index.html': 'x', '.git/config': 'y', 'nested/.git/keep': 'z' });
    symlinkSync(join(outside, 'secret.txt'), join(site, 'leak.txt'));
    symlinkSync(outside, join(site, 'linked-dir'));
    const skipped: string[] = [];
    const store = createArtifactStore(tempDir());
    const stored = await store.storeDirectory(site, {
      ...limits,
      exclude: ['.git'],
      onSkip: (path, reason) => skipped.push(`${path}: ${reason}`),
    });
    const manifest = await store.readManifest(stored.artifactId);
    expect(Object.keys(manifest!.files)).toEqual(['/index.html', '/nested/.git/keep']);
    expect(skipped.sort()).toEqual(['/leak.txt: symbolic link', '/linked-dir: symbolic link']);
  });

  it('refuses an output over the size limit, saying how big it is', async () => {
    const store = createArtifactStore(tempDir());
    const site = tempDir({ 'big.bin': 'x'.repeat(3 * 1024 * 1024), 'more.bin': 'y'.repeat(1024 * 1024) });
    const attempt = store.storeDirectory(site, { maxBytes: 2 * 1024 * 1024, maxFiles: 10 });
    await expect(attempt).rejects.toThrow(BuildError);
    await expect(store.storeDirectory(site, { maxBytes: 2 * 1024 * 1024, maxFiles: 10 })).rejects.toThrow(
      'The build output is 4 MiB, over the 2 MiB limit (SLIPWAY_MAX_OUTPUT_SIZE). Leave large files out of the output directory.',
    );
  });

  it('refuses an output of too many files', async () => {
    const store = createArtifactStore(tempDir());
    const site = tempDir({ a: '1', b: '2', c: '3' });
    await expect(store.storeDirectory(site, { maxBytes: 1000, maxFiles: 2 })).rejects.toThrow(
      'The build output has more than 2 files, the limit (SLIPWAY_MAX_OUTPUT_FILES).',
    );
  });

  it('answers null for an unknown or malformed artifact id, never reading outside the store', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    expect(await store.readManifest('art_aaaaaaaaaaaaaaaaaaaa')).toBeNull();
    expect(await store.readManifest('../../etc/passwd')).toBeNull();
    expect(() => store.blobPath('../x')).toThrow(/Not a sha256 hash/);
  });

  it('keeps manifests in memory once read (they never change)', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const { artifactId } = await store.storeDirectory(tempDir({ 'index.html': 'x' }), limits);
    const first = await store.readManifest(artifactId);
    rmSync(join(root, 'manifests', `${artifactId}.json`));
    expect(await store.readManifest(artifactId)).toBe(first);
    // A fresh store (another process) reads the disk.
    expect(await createArtifactStore(root).readManifest(artifactId)).toBeNull();
  });
});

describe('files of known hashes (prebuilt uploads)', () => {
  const site = {
    'index.html': '<h1>hi</h1>',
    'assets/app.js': 'console.log(1)',
    'assets/same.js': 'console.log(1)',
  };
  const listOf = (files: Record<string, string>) =>
    Object.entries(files).map(([path, text]) => ({ path, sha256: sha(text), size: Buffer.byteLength(text) }));
  /** A source that copies from `dir` (files named by hash), recording what it was asked for. */
  function sourceFrom(files: Record<string, string>) {
    const asked: string[] = [];
    const copies = tempDir();
    const bytes = new Map(Object.values(files).map((t) => [sha(t), t]));
    const source = async (hash: string) => {
      asked.push(hash);
      const text = bytes.get(hash);
      if (text === undefined) return null;
      const file = join(copies, `${hash}.${asked.length}`);
      writeFileSync(file, text);
      return { file, move: true };
    };
    return { source, asked, copies };
  }

  it('stores the manifest the same folder would have, asking only for the blobs the store lacks', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const byFolder = await store.readManifest((await store.storeDirectory(tempDir(site), limits)).artifactId);
    const fresh = createArtifactStore(tempDir());
    const first = sourceFrom(site);
    const stored = await fresh.storeHashed(listOf(site), first.source, limits);
    expect(stored).toMatchObject({ fileCount: 3, totalBytes: byFolder!.totalBytes, linkCount: 0 });
    expect((await fresh.readManifest(stored.artifactId))!.files).toEqual(byFolder!.files);
    // One blob per content, each asked for once; the copies handed over are gone.
    expect(first.asked.sort()).toEqual([sha('<h1>hi</h1>'), sha('console.log(1)')].sort());
    expect(readdirSync(first.copies)).toEqual([]);
    expect(readFileSync(fresh.blobPath(sha('console.log(1)')), 'utf8')).toBe('console.log(1)');

    // A redeploy with one file changed asks for that one only.
    const changed = { ...site, 'index.html': '<h1>changed</h1>' };
    const second = sourceFrom(changed);
    const again = await fresh.storeHashed(listOf(changed), second.source, limits);
    expect(second.asked).toEqual([sha('<h1>changed</h1>')]);
    expect((await fresh.readManifest(again.artifactId))!.files['/index.html']).toEqual({
      hash: sha('<h1>changed</h1>'),
      size: '<h1>changed</h1>'.length,
    });
  });

  it('refuses paths that are not plain relative ones, the limits as for a folder, and a file no longer stored', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const { source } = sourceFrom(site);
    for (const path of ['../x.html', 'a/../../x', './a', 'a//b', '/abs.html', 'a\\b', '']) {
      const list = [{ path, sha256: sha('x'), size: 1 }];
      await expect(store.storeHashed(list, source, limits)).rejects.toThrow(
        new BuildError(`The uploaded path ${JSON.stringify(path)} is not a plain relative path.`),
      );
    }
    await expect(store.storeHashed(listOf(site), source, { maxBytes: 1000, maxFiles: 2 })).rejects.toThrow(
      'The build output has more than 2 files, the limit (SLIPWAY_MAX_OUTPUT_FILES).',
    );
    await expect(store.storeHashed(listOf(site), source, { maxBytes: 20, maxFiles: 10 })).rejects.toThrow(
      /^The build output is 39 bytes, over the 20 bytes limit \(SLIPWAY_MAX_OUTPUT_SIZE\)/,
    );
    const gone = [{ path: 'lost.html', sha256: sha('never kept'), size: 10 }];
    await expect(store.storeHashed(gone, source, limits)).rejects.toThrow(
      `The uploaded file lost.html (${sha('never kept').slice(0, 12)}...) is no longer stored: upload it again and redeploy.`,
    );
    // Nothing was stored by the refused calls: no manifest, no blob.
    expect(existsSync(join(root, 'manifests'))).toBe(false);
    expect(existsSync(join(root, 'blobs'))).toBe(false);
  });
});

describe('a server app’s links and executable files', () => {
  it('keeps links that stay inside and executable bits, refuses links that could climb out, and writes them back out', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const app = tempDir({
      'node_modules/next/dist/bin/next': '#!/usr/bin/env node\n',
      'packages/ui/index.js': 'module.exports = 1;',
      'apps/web/server.js': "require('ui')",
    });
    chmodSync(join(app, 'node_modules/next/dist/bin/next'), 0o755);
    mkdirSync(join(app, 'node_modules/.bin'));
    symlinkSync('../next/dist/bin/next', join(app, 'node_modules/.bin/next'));
    mkdirSync(join(app, 'apps/web/node_modules'));
    symlinkSync('../../../packages/ui', join(app, 'apps/web/node_modules/ui'));
    symlinkSync('.', join(app, 'here'));
    // Each of these would reach outside the app's folder.
    symlinkSync('/etc/passwd', join(app, 'absolute'));
    symlinkSync('../../outside', join(app, 'packages/up'));
    symlinkSync('here/here/..', join(app, 'through-a-link'));

    const skipped: string[] = [];
    const stored = await store.storeDirectory(app, {
      ...limits,
      keepLinks: true,
      onSkip: (p) => skipped.push(p),
    });
    expect(stored.linkCount).toBe(3);
    expect(skipped.sort()).toEqual(['/absolute', '/packages/up', '/through-a-link']);
    const manifest = (await store.readManifest(stored.artifactId))!;
    expect(manifest.links).toEqual({
      '/apps/web/node_modules/ui': '../../../packages/ui',
      '/here': '.',
      '/node_modules/.bin/next': '../next/dist/bin/next',
    });
    expect(manifest.files['/node_modules/next/dist/bin/next']).toMatchObject({ executable: true });
    expect(manifest.files['/packages/ui/index.js']).not.toHaveProperty('executable');

    // Static sites keep neither.
    const plain = await store.readManifest((await store.storeDirectory(app, limits)).artifactId);
    expect(plain!.links).toBeUndefined();
    expect(plain!.files['/node_modules/next/dist/bin/next']).not.toHaveProperty('executable');

    const runtimes = tempDir();
    const dir = await createMaterializer(createArtifactReader(root), runtimes).dirFor(stored.artifactId);
    expect(readlinkSync(join(dir, 'node_modules/.bin/next'))).toBe('../next/dist/bin/next');
    expect(statSync(join(dir, 'node_modules/.bin/next')).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(dir, 'apps/web/node_modules/ui/index.js'), 'utf8')).toBe('module.exports = 1;');
    expect(statSync(join(dir, 'packages/ui/index.js')).mode & 0o777).toBe(0o644);
    expect(existsSync(join(dir, 'absolute'))).toBe(false);
  });

  it('refuses to write out a manifest whose link climbs out', async () => {
    const root = tempDir();
    const store = createArtifactStore(root);
    const stored = await store.storeDirectory(tempDir({ 'a.js': '' }), { ...limits, keepLinks: true });
    const file = join(root, 'manifests', `${stored.artifactId}.json`);
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...manifest, links: { '/x': 'a/../..' } }));
    const dirFor = createMaterializer(createArtifactReader(root), tempDir()).dirFor(stored.artifactId);
    await expect(dirFor).rejects.toThrow('unsafe link: /x -> a/../..');
  });
});
