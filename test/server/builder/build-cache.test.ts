import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactStore, type ArtifactStore } from '../../../server/features/builds/artifacts.ts';
import {
  buildDeployment,
  type BuildDeploymentOptions,
} from '../../../server/features/builds/build-deployment.ts';
import {
  type BuildCacheStore,
  createBuildCacheStore,
} from '../../../server/features/builds/build-cache-store.ts';
import { cacheLanes } from '../../../server/platform/store/cache-lanes.ts';
import { createStoredBuildCacheStore } from '../../../server/features/builds/stored-build-cache.ts';
import { createS3BlobStore } from '../../../server/platform/storage/s3-blob-store.ts';
import { createGitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { testSandbox } from '../../helpers/sandbox.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../../helpers/s3-server.ts';

let s3: S3Server | undefined;
let prefixes = 0;
beforeAll(async () => {
  if (!s3ServerMissing) s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.stop();
});

/** Where the caches live: the same suites run against each. */
interface Backend {
  name: string;
  skip: string;
  /** A store whose machine-local files are in `dir`. */
  open(dir: string, maxBytesPerProject: number): BuildCacheStore;
}
const backends: Backend[] = [
  {
    name: 'local directory',
    skip: '',
    open: (dir, maxBytesPerProject) => createBuildCacheStore(dir, { maxBytesPerProject }),
  },
  {
    name: `object storage${s3ServerMissing}`,
    skip: s3ServerMissing,
    // A prefix per store: each starts with an empty bucket, as the local ones do.
    open: (dir, maxBytesPerProject) =>
      createStoredBuildCacheStore(createS3BlobStore(s3!.config(`caches${++prefixes}`)), {
        maxBytesPerProject,
        localDir: dir,
      }),
  },
];

const pkg = {
  name: 'cached',
  version: '1.0.0',
  dependencies: { dep: 'file:dep' },
  scripts: { build: 'node build.js' },
};
const lock = {
  name: 'cached',
  version: '1.0.0',
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { name: 'cached', version: '1.0.0', dependencies: { dep: 'file:dep' } },
    dep: { version: '1.0.0' },
    'node_modules/dep': { resolved: 'dep', link: true },
  },
};
// Counts its builds in a framework-style cache, and says whether another project's file is there.
const BUILD = `
const fs = require('fs');
const file = 'node_modules/.cache/count';
const count = Number(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : 0) + 1;
fs.mkdirSync('node_modules/.cache', { recursive: true });
fs.writeFileSync(file, String(count));
if (process.env.PLANT) fs.writeFileSync('node_modules/planted.txt', process.env.PLANT);
fs.mkdirSync('dist', { recursive: true });
const planted = fs.existsSync('node_modules/planted.txt') ? fs.readFileSync('node_modules/planted.txt', 'utf8') : 'none';
let tamper = '';
if (process.env.TAMPER) {
  try { fs.appendFileSync('node_modules/.package-lock.json', 'tampered'); tamper = ' tamper ok'; }
  catch (err) { tamper = ' tamper ' + err.code; }
}
fs.writeFileSync('dist/index.html', require('dep') + ' build ' + count + ' planted ' + planted + tamper);
console.log('found in the cache: ' + planted);
`;

/** The folder of a lane's cache in a project's cache directory. */
const laneDir = (lane: string) => createHash('sha256').update(lane).digest('hex').slice(0, 24);

for (const backend of backends) {
  /** Real builds in the sandbox with the build cache: hit, miss, off, corrupt, per project, capped. */
  describe.skipIf(Boolean(backend.skip))(`the build cache (${backend.name})`, { timeout: 120_000 }, () => {
    let root: string;
    let artifacts: ArtifactStore;
    let store: BuildCacheStore;
    let repo: GitRepo;

    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'slipway-build-cache-'));
      chmodSync(root, 0o711);
      artifacts = createArtifactStore(join(root, 'artifacts'));
      store = backend.open(join(root, 'artifacts', 'build-cache'), 50 * 1024 * 1024);
      repo = createGitRepo({
        files: {
          'package.json': JSON.stringify(pkg),
          'package-lock.json': JSON.stringify(lock),
          'dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
          'dep/index.js': "module.exports = 'dep says hi';",
          'build.js': BUILD,
        },
      });
    });
    afterAll(() => {
      rmSync(root, { recursive: true, force: true });
      repo?.remove();
    });

    const build = async (
      projectId: string,
      opts: Partial<BuildDeploymentOptions> & {
        maxBytes?: number;
        branch?: string;
        target?: 'production' | 'preview';
      } = {},
    ) => {
      const lines: string[] = [];
      const result = await buildDeployment({
        sandbox: await testSandbox(),
        repositoryUrl: repo.url,
        ref: 'main',
        env: { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
        secrets: [],
        workspaceRoot: join(root, 'workspaces'),
        artifacts,
        timeoutMs: 120_000,
        maxOutputBytes: 10 * 1024 * 1024,
        log: (_type, line) => lines.push(line),
        cache: {
          store,
          projectId,
          lanes: cacheLanes({ target: opts.target ?? 'production', ref: opts.branch ?? 'main' }, 'main'),
          maxBytes: opts.maxBytes ?? 50 * 1024 * 1024,
        },
        ...opts,
      }).catch((err: Error) => err);
      if (result instanceof Error) throw new Error(`${result.message}\n${lines.join('\n')}`);
      const manifest = await artifacts.readManifest(result.artifactId);
      const page = readFileSync(artifacts.blobPath(manifest!.files['/index.html']!.hash), 'utf8');
      return { page, text: lines.join('\n') };
    };

    it('misses, installs and saves; then restores node_modules and the framework cache and skips the install', async () => {
      const first = await build('prj_cachea');
      expect(first.text).toContain('Build cache: miss (none saved yet)');
      expect(first.text).toContain('==> Installing dependencies: npm ci');
      expect(first.text).toMatch(/Build cache: saved \d/);
      expect(first.page).toBe('dep says hi build 1 planted none');

      const second = await build('prj_cachea');
      expect(second.text).toMatch(/Build cache: hit, restored \d/);
      expect(second.text).toContain(
        '==> Skipping install: node_modules restored from the build cache (package-lock.json unchanged)',
      );
      expect(second.text).not.toContain('Installing dependencies');
      expect(second.page).toBe('dep says hi build 2 planted none');
    });

    it('a production build of another branch starts from the production branch’s cache and keeps its own', async () => {
      const hotfix = await build('prj_cachea', { branch: 'hotfix' });
      expect(hotfix.text).toMatch(/Build cache: hit, restored .* saved by a production build of main/);
      expect(hotfix.page).toMatch(/build 3/);
      expect((await build('prj_cachea', { branch: 'hotfix' })).page).toMatch(/build 4/);
      // Production's own cache moved on without the other branch's builds.
      expect((await build('prj_cachea')).page).toMatch(/build 3/);
    });

    it('caches follow trust: production to previews never, previews among themselves, a fork’s ref only to itself', async () => {
      const plant = (secret: string) => ({ env: { PLANT: secret, npm_config_offline: 'true' } });
      const prod = await build('prj_cachetrust', plant('production secret'));
      expect(prod.page).toMatch(/planted production secret$/);

      // Production -> preview: the preview of another branch finds nothing, in its files or its log.
      const preview = await build('prj_cachetrust', { target: 'preview', branch: 'feature' });
      expect(preview.text).toContain('Build cache: miss (none saved yet)');
      expect(preview.page).toBe('dep says hi build 1 planted none');
      expect(preview.text).not.toContain('production secret');
      // A preview of the production branch itself is a preview too.
      const previewOfMain = await build('prj_cachetrust', { target: 'preview', branch: 'main' });
      expect(previewOfMain.page).not.toContain('production secret');

      // Previews share among themselves: a new branch starts from the newest preview's cache.
      await build('prj_cachetrust', { target: 'preview', branch: 'feature', ...plant('preview secret') });
      const other = await build('prj_cachetrust', { target: 'preview', branch: 'other' });
      expect(other.text).toMatch(/Build cache: hit, restored .* saved by a preview build of feature/);
      expect(other.page).toMatch(/planted preview secret$/);

      // Preview -> production: never.
      const prodAgain = await build('prj_cachetrust');
      expect(prodAgain.page).toMatch(/build 2 planted production secret$/);
      expect(prodAgain.text).not.toContain('preview secret');

      // Base -> fork: a pull request's ref starts from nothing, whatever the repository has.
      const fork = await build('prj_cachetrust', { target: 'preview', branch: 'refs/pull/7/head' });
      expect(fork.text).toContain('Build cache: miss (none saved yet)');
      expect(fork.page).toBe('dep says hi build 1 planted none');
      expect(fork.text).not.toMatch(/production secret|preview secret/);
      // Fork -> base: what a fork's build leaves is only ever its own ref's.
      await build('prj_cachetrust', {
        target: 'preview',
        branch: 'refs/pull/7/head',
        ...plant('fork poison'),
      });
      expect((await build('prj_cachetrust', { target: 'preview', branch: 'refs/pull/7/head' })).page).toMatch(
        /planted fork poison$/,
      );
      const afterFork = await build('prj_cachetrust', { target: 'preview', branch: 'third' });
      expect(afterFork.page).toMatch(/planted preview secret$/);
      expect(afterFork.text).not.toContain('fork poison');
      expect((await build('prj_cachetrust', { target: 'preview', branch: 'refs/pull/8/head' })).page).toMatch(
        /planted none$/,
      );
      expect((await build('prj_cachetrust')).page).toMatch(/planted production secret$/);
    });

    it('"cache": false builds from nothing and leaves the cache alone', async () => {
      const off = await build('prj_cachea', { cache: 'off' });
      expect(off.text).toContain('Build cache: off for this deployment (cache: false)');
      expect(off.text).toContain('==> Installing dependencies: npm ci');
      expect(off.page).toBe('dep says hi build 1 planted none');
      expect((await build('prj_cachea')).page).toMatch(/build 4/);
    });

    it('never gives one project what another project’s build left in its cache', async () => {
      const planter = await build('prj_cacheplanter', {
        env: { PLANT: 'secret of the planter', npm_config_offline: 'true' },
      });
      expect(planter.page).toBe('dep says hi build 1 planted secret of the planter');
      // Its own next build gets it back from its cache.
      expect((await build('prj_cacheplanter')).page).toBe(
        'dep says hi build 2 planted secret of the planter',
      );
      const other = await build('prj_cacheother');
      expect(other.text).toContain('Build cache: miss');
      expect(other.page).toBe('dep says hi build 1 planted none');
    });

    /** The folder a build of the lane restores from, on this machine. */
    const keptDir = async (projectId: string, lane: string) =>
      (await store.find(projectId, [{ lane }], 'any key'))!.dir;

    it('discards a damaged cache, builds without it and saves a good one', async () => {
      // A file gone from the kept node_modules: only counting on restore can tell.
      rmSync(
        join(await keptDir('prj_cachea', 'production:main'), 'src', 'node_modules', '.package-lock.json'),
      );
      const run = await build('prj_cachea');
      expect(run.text).toContain(
        'Build cache: the saved cache could not be restored; discarded, building without it',
      );
      expect(run.text).toContain('==> Installing dependencies: npm ci');
      expect(run.page).toBe('dep says hi build 1 planted none');
      expect((await build('prj_cachea')).page).toMatch(/build 2/);
    });

    it('a build cannot change a kept file in place, and a checkout’s node_modules link cannot send the restore outside', async () => {
      await build('prj_cachekeep');
      const tampering = await build('prj_cachekeep', { env: { TAMPER: '1', npm_config_offline: 'true' } });
      expect(tampering.text).toMatch(/Build cache: hit/);
      expect(tampering.page).toBe('dep says hi build 2 planted none tamper EACCES');
      const kept = await keptDir('prj_cachekeep', 'production:main');
      expect(readFileSync(join(kept, 'src', 'node_modules', '.package-lock.json'), 'utf8')).not.toContain(
        'tampered',
      );

      // The same project, its repository now holding node_modules as a link to a folder outside.
      const outside = mkdtempSync(join(tmpdir(), 'slipway-outside-'));
      const linked = createGitRepo({
        files: {
          'package.json': JSON.stringify(pkg),
          'package-lock.json': JSON.stringify(lock),
          'dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
          'dep/index.js': "module.exports = 'dep says hi';",
          'build.js': BUILD,
        },
      });
      try {
        symlinkSync(outside, join(linked.dir, 'node_modules'));
        linked.commit({}, 'node_modules as a link');
        const run = await build('prj_cachekeep', { repositoryUrl: linked.url });
        expect(run.text).toMatch(/Build cache: hit/);
        expect(run.page).toBe('dep says hi build 3 planted none');
        expect(readdirSync(outside)).toEqual([]);
      } finally {
        linked.remove();
        rmSync(outside, { recursive: true, force: true });
      }
    });

    it('a changed install command restores the cache but installs, then saves under the new key', async () => {
      await build('prj_cachepartial');
      const changed = {
        installCommand: 'npm ci --prefer-offline',
        buildCommand: null,
        outputDirectory: null,
        rootDirectory: null,
      };
      const partial = await build('prj_cachepartial', { settings: changed });
      expect(partial.text).toMatch(
        /Build cache: partial hit, restored \d.* for another lockfile or install command; installing from it/,
      );
      expect(partial.text).toContain('==> Installing dependencies: npm ci --prefer-offline');
      // npm ci empties node_modules, framework cache included: the downloads are what carried over.
      expect(partial.page).toBe('dep says hi build 1 planted none');
      expect(partial.text).toMatch(/Build cache: saved \d/);
      const again = await build('prj_cachepartial', { settings: changed });
      expect(again.text).toMatch(/Build cache: hit, restored \d/);
      expect(again.text).not.toContain('Installing dependencies');
      expect(again.page).toBe('dep says hi build 2 planted none');
    });

    it('does not save a cache over the size limit', async () => {
      const run = await build('prj_cachesmall', { maxBytes: 64 });
      expect(run.text).toMatch(
        /Build cache: not saved, .* is over the limit of 64 bytes \(SLIPWAY_BUILD_CACHE_SIZE\)/,
      );
      expect((await build('prj_cachesmall', { maxBytes: 64 })).text).toContain('Build cache: miss');
    });
  });
}

for (const backend of backends) {
  const local = backend.skip === '' && backend.name === 'local directory';
  describe.skipIf(Boolean(backend.skip))(`the build cache store (${backend.name})`, () => {
    it('evicts a project’s oldest caches beyond its cap, finds partial hits, and forgets a folder without its description', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'slipway-cache-store-'));
      try {
        const store = backend.open(dir, 1500);
        const fill = (bytes: number) => async (into: string) => {
          writeFileSync(join(into, 'blob'), Buffer.alloc(bytes, 1));
          return { blob: { files: 1, bytes } };
        };
        const lane = (name: string) => [{ lane: name }];
        expect(await store.save('prj_one', 'main', 'k1', 10_000, fill(1000))).toEqual({
          saved: true,
          bytes: 1000,
          evicted: 0,
        });
        await new Promise((r) => setTimeout(r, 5));
        expect(await store.save('prj_one', 'feature', 'k1', 10_000, fill(1000))).toEqual({
          saved: true,
          bytes: 1000,
          evicted: 1,
        });
        expect(await store.find('prj_one', lane('main'), 'k1')).toBeNull();
        const found = await store.find('prj_one', lane('feature'), 'k1');
        expect(found).toMatchObject({
          bytes: 1000,
          lane: 'feature',
          key: 'k1',
          trees: { blob: { files: 1 } },
        });
        expect(readFileSync(join(found!.dir, 'blob')).length).toBe(1000);
        // Another key finds the branch's cache as a partial hit, saying under which key it was saved.
        expect(await store.find('prj_one', lane('feature'), 'another key')).toMatchObject({ key: 'k1' });
        expect(await store.find('prj_two', lane('feature'), 'k1')).toBeNull();
        // Over the limit: not saved, the previous one kept, nothing left behind.
        expect(await store.save('prj_one', 'feature', 'k2', 500, fill(600))).toEqual({
          saved: false,
          bytes: 600,
        });
        expect(await store.find('prj_one', lane('feature'), 'k2')).toMatchObject({ key: 'k1' });
        if (local) {
          expect(readdirSync(join(dir, 'prj_one')).sort()).toHaveLength(2);
          // A description without its folder (removed by hand, a crash) is not a cache.
          rmSync(found!.dir, { recursive: true });
          expect(await store.find('prj_one', lane('feature'), 'k1')).toBeNull();
        }
        await expect(store.save('../escape', 'main', 'k', 10, fill(1))).rejects.toThrow('Not a project id');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe.skipIf(Boolean(backend.skip))(
    `the build cache store’s organization quota (${backend.name})`,
    () => {
      it('evicts the organization’s oldest caches, of any of its projects, never the one just saved, and saves none larger than the quota', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'slipway-cache-org-'));
        try {
          const store = backend.open(dir, 10_000);
          const fill = (bytes: number) => async (into: string) => {
            writeFileSync(join(into, 'blob'), Buffer.alloc(bytes, 1));
            return { blob: { files: 1, bytes } };
          };
          const org = { projectIds: ['prj_orga', 'prj_orgb'], maxBytes: 2500 };
          const lane = (name: string) => [{ lane: name }];
          const tick = () => new Promise((r) => setTimeout(r, 5));
          expect(await store.save('prj_orga', 'main', 'k', 10_000, fill(1000), org)).toEqual({
            saved: true,
            bytes: 1000,
            evicted: 0,
            quotaEvicted: 0,
          });
          await tick();
          // Another organization's caches neither count nor go.
          await store.save('prj_other', 'main', 'k', 10_000, fill(5000));
          await tick();
          await store.save('prj_orgb', 'main', 'k', 10_000, fill(1000), org);
          await tick();
          // 3000 bytes over 2500: project a's cache, the oldest, goes, though b is saving.
          expect(await store.save('prj_orgb', 'feature', 'k', 10_000, fill(1000), org)).toEqual({
            saved: true,
            bytes: 1000,
            evicted: 0,
            quotaEvicted: 1,
          });
          expect(await store.find('prj_orga', lane('main'), 'k')).toBeNull();
          expect(await store.find('prj_orgb', lane('main'), 'k')).toMatchObject({ bytes: 1000 });
          expect(await store.find('prj_other', lane('main'), 'k')).toMatchObject({ bytes: 5000 });
          await tick();
          // A cache bigger than the others together evicts them all but never itself.
          expect(await store.save('prj_orga', 'main', 'k', 10_000, fill(2400), org)).toMatchObject({
            saved: true,
            quotaEvicted: 2,
          });
          expect(await store.find('prj_orga', lane('main'), 'k')).toMatchObject({ bytes: 2400 });
          // Larger than the quota on its own: not saved, and nothing evicted for it.
          expect(await store.save('prj_orgb', 'main', 'k', 10_000, fill(2600), org)).toEqual({
            saved: false,
            bytes: 2600,
            over: 'organization',
          });
          expect(await store.find('prj_orga', lane('main'), 'k')).toMatchObject({ bytes: 2400 });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    },
  );

  describe.skipIf(Boolean(backend.skip))(`the build cache store’s lanes (${backend.name})`, () => {
    it('finds the newest cache of a kind, never a lane of another kind, and never restores a cache from before lanes', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'slipway-cache-lanes-'));
      try {
        const store = backend.open(dir, 10_000);
        const fill = async (into: string) => {
          writeFileSync(join(into, 'blob'), 'x');
          return { blob: { files: 1, bytes: 1 } };
        };
        let at = 0;
        const later = async () => {
          const now = Date.now();
          while (Date.now() <= Math.max(now, at)) await new Promise((r) => setImmediate(r));
          at = Date.now();
        };
        for (const lane of ['preview:a', 'production:main', 'ref:refs/pull/1/head', 'preview:b']) {
          await later();
          await store.save('prj_lanes', lane, 'k', 10_000, fill);
        }
        expect(await store.find('prj_lanes', [{ newestOf: 'preview' }], 'k')).toMatchObject({
          lane: 'preview:b',
        });
        expect(
          await store.find('prj_lanes', [{ lane: 'preview:a' }, { newestOf: 'preview' }], 'k'),
        ).toMatchObject({
          lane: 'preview:a',
        });
        // An exact key anywhere in the sources beats a partial one earlier.
        await later();
        await store.save('prj_lanes', 'preview:a', 'other', 10_000, fill);
        expect(
          await store.find('prj_lanes', [{ lane: 'preview:a' }, { newestOf: 'preview' }], 'k'),
        ).toMatchObject({
          lane: 'preview:b',
        });
        expect(await store.find('prj_lanes', [{ newestOf: 'production' }], 'k')).toMatchObject({
          lane: 'production:main',
        });
        expect(await store.find('prj_lanes', [{ lane: 'preview:c' }], 'k')).toBeNull();

        if (!local) return;
        // A cache saved before lanes (its description names a branch) is left to eviction.
        const hash = laneDir('main');
        mkdirSync(join(dir, 'prj_lanes', hash));
        writeFileSync(
          join(dir, 'prj_lanes', `${hash}.json`),
          JSON.stringify({
            branch: 'main',
            key: 'k',
            trees: {},
            bytes: 1,
            savedAt: '2020-01-01T00:00:00.000Z',
          }),
        );
        expect(
          await store.find('prj_lanes', [{ lane: 'main' }, { newestOf: 'production' }], 'k'),
        ).toMatchObject({
          lane: 'production:main',
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

describe.skipIf(Boolean(s3ServerMissing))(`build caches in object storage${s3ServerMissing}`, () => {
  it('another worker, with a disk of its own, restores what one saved; an archive without its description is not a cache', async () => {
    const blobs = createS3BlobStore(s3!.config(`workers${++prefixes}`));
    const worker = (dir: string) =>
      createStoredBuildCacheStore(blobs, { maxBytesPerProject: 10_000, localDir: dir });
    const [one, two] = [
      mkdtempSync(join(tmpdir(), 'slipway-w1-')),
      mkdtempSync(join(tmpdir(), 'slipway-w2-')),
    ];
    try {
      const fill = async (into: string) => {
        mkdirSync(join(into, 'src', 'node_modules', '.bin'), { recursive: true });
        writeFileSync(join(into, 'src', 'node_modules', 'dep.js'), 'module.exports = 1;');
        chmodSync(join(into, 'src', 'node_modules', 'dep.js'), 0o555);
        symlinkSync('../dep.js', join(into, 'src', 'node_modules', '.bin', 'dep'));
        return { 'src/node_modules': { files: 1, bytes: 19 } };
      };
      expect(await worker(one).save('prj_shared', 'production:main', 'k', 10_000, fill)).toMatchObject({
        saved: true,
      });
      const found = await worker(two).find('prj_shared', [{ lane: 'production:main' }], 'k');
      expect(found).toMatchObject({ lane: 'production:main', key: 'k', bytes: 19 });
      expect(found!.dir.startsWith(two)).toBe(true);
      expect(readFileSync(join(found!.dir, 'src', 'node_modules', 'dep.js'), 'utf8')).toBe(
        'module.exports = 1;',
      );
      // Read-only as it was kept, and the link a link.
      expect(statSync(join(found!.dir, 'src', 'node_modules', 'dep.js')).mode & 0o222).toBe(0);
      expect(readlinkSync(join(found!.dir, 'src', 'node_modules', '.bin', 'dep'))).toBe('../dep.js');
      // Never another lane's, however the bucket is listed.
      expect(await worker(two).find('prj_shared', [{ newestOf: 'preview' }], 'k')).toBeNull();

      // A newer save whose description is not written yet (or never will be): the older one is still the cache.
      const keys: string[] = [];
      for await (const o of blobs.list('build-cache/prj_shared/')) keys.push(o.key);
      const archive = keys.find((k) => k.endsWith('.tar.gz'))!;
      const newer = archive.replace(/\/\d{15}-/, `/${String(Date.now() + 60_000).padStart(15, '0')}-`);
      await blobs.putIfAbsent(newer, { bytes: 'half of an archive' });
      const fresh = mkdtempSync(join(tmpdir(), 'slipway-w3-'));
      try {
        expect(await worker(fresh).find('prj_shared', [{ lane: 'production:main' }], 'k')).toMatchObject({
          key: 'k',
          id: found!.id,
        });
      } finally {
        rmSync(fresh, { recursive: true, force: true });
      }
    } finally {
      rmSync(one, { recursive: true, force: true });
      rmSync(two, { recursive: true, force: true });
    }
  });
});
