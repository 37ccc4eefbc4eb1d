import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactStore } from '../../server/features/builds/artifacts.ts';
import type { BuildCacheStore } from '../../server/features/builds/build-cache-store.ts';
import { createBuildCacheStore } from '../../server/features/builds/build-cache-store.ts';
import { createStoredBuildCacheStore } from '../../server/features/builds/stored-build-cache.ts';
import { loadConfig } from '../../server/platform/config.ts';
import { createCipher } from '../../server/core/secrets.ts';
import type { Deps } from '../../server/platform/deps/deps.ts';
import { hashKey } from '../../server/platform/storage/blob-store.ts';
import { collectionGraceMs } from '../../server/features/builds/job/collect-artifacts.ts';
import { collectStorage } from '../../server/features/builds/job/collect-storage.ts';
import { blobStoreOf } from '../../server/platform/storage/open-blob-store.ts';
import { createS3BlobStore } from '../../server/platform/storage/s3-blob-store.ts';
import { allMigrations } from '../../server/platform/store/migrations/index.ts';
import { ManualClock } from '../helpers/clock.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';
import { runShell } from '../helpers/process.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DAY = 86_400_000;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const blob = (content: string) => hashKey('blobs', sha(content));

let s3: S3Server | undefined;
beforeAll(async () => {
  if (!s3ServerMissing) s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.stop();
});

const backends = [
  { name: 'local directory', skip: '', env: (): Record<string, string> => ({}) },
  {
    name: `object storage${s3ServerMissing}`,
    skip: s3ServerMissing,
    env: (): Record<string, string> => s3!.env('collected/'),
  },
];

for (const backend of backends) {
  /**
   * The monitoring run's storage collection in a running service, against the directory and the
   * bucket: a deleted project's artifacts stay for SLIPWAY_ARTIFACT_RETENTION, then its manifests
   * go and its blobs are condemned, and a grace period later removed, except those another
   * project lists or a build reused meanwhile.
   */
  describe.skipIf(Boolean(backend.skip))(`storage collection (${backend.name})`, { timeout: 180_000 }, () => {
    let s: Stack;
    const repos: GitRepo[] = [];
    beforeAll(async () => {
      s = await startStack({ env: backend.env() });
    });
    afterAll(async () => {
      await s?.stop();
      for (const r of repos) r.remove();
    });

    it('removes a deleted project’s artifacts after the retention, never a blob still listed or reused', async () => {
      const { token, orgId } = await s.user();
      const api = s.client(token);
      const deploy = async (name: string, files: Record<string, string>) => {
        const repo = createGitRepo({ files });
        repos.push(repo);
        const project = await api.projects.create({ name, repositoryUrl: repo.url, organizationId: orgId });
        const d = await deploymentDone(api, (await api.deployments.create(project.id)).id);
        expect(d.status, d.errorMessage ?? '').toBe('live');
        return { project, d };
      };
      const a = await deploy('gone', {
        'index.html': 'only in the deleted project',
        'reused.txt': 'reused by a later build',
        'shared.js': 'shared by both projects',
      });
      const b = await deploy('kept', {
        'index.html': 'the kept project',
        'shared.js': 'shared by both projects',
      });
      await api.projects.delete(a.project.id);

      const deps = s.running.deps;
      const store = blobStoreOf(deps.config);
      const has = async (key: string) => (await store.head(key)) !== null;
      // An artifact no deployment names (a build that failed after storing its output).
      const orphanDir = tempDir({ 'orphan.html': 'stored by a build that then failed' });
      const orphan = await createArtifactStore(store).storeDirectory(orphanDir, {
        maxBytes: 1e6,
        maxFiles: 10,
      });
      const clock = new ManualClock(new Date().toISOString());
      const at = { ...deps, clock } as Deps;
      const grace = collectionGraceMs(deps.config);

      // Within the retention (30 days by default), nothing of the deleted project goes.
      clock.advance(grace + 60_000);
      const early = await collectStorage(at);
      expect(early.artifacts).toEqual({ manifests: 1, condemned: 1, blobs: 0, spared: 0 });
      expect(await has(`manifests/${orphan.artifactId}.json`)).toBe(false);
      expect(await has(blob('stored by a build that then failed'))).toBe(true);
      expect(await has(blob('only in the deleted project'))).toBe(true);

      // Past the retention: its manifest goes, and its own blobs are condemned, not removed.
      clock.advance(deps.config.artifactRetentionMs);
      const first = await collectStorage(at);
      // The failed build's blob, condemned a retention ago, goes now.
      expect(first.artifacts).toEqual({ manifests: 1, condemned: 2, blobs: 1, spared: 0 });
      expect(await has(blob('stored by a build that then failed'))).toBe(false);
      const deletedArtifact = (
        await deps.db
          .selectFrom('deployments')
          .select('artifact_id')
          .where('id', '=', a.d.id)
          .executeTakeFirstOrThrow()
      ).artifact_id!;
      expect(await has(`manifests/${deletedArtifact}.json`)).toBe(false);
      expect(await has(blob('only in the deleted project'))).toBe(true);
      expect(
        (await deps.db.selectFrom('condemned_blobs').select('key').orderBy('key').execute()).map(
          (r) => r.key,
        ),
      ).toEqual([blob('only in the deleted project'), blob('reused by a later build')].sort());

      // A build reuses a condemned blob: it takes it off the list before looking for it.
      const reuser = await deploy('reuser', { 'index.html': 'reused by a later build' });

      // A grace period later the condemned blobs go, except the one reused; shared ones never were listed.
      clock.advance(grace + 60_000);
      const second = await collectStorage(at);
      expect(second.artifacts).toEqual({ manifests: 0, condemned: 0, blobs: 1, spared: 0 });
      expect(await has(blob('only in the deleted project'))).toBe(false);
      expect(await has(blob('reused by a later build'))).toBe(true);
      expect(await has(blob('shared by both projects'))).toBe(true);
      expect(await deps.db.selectFrom('condemned_blobs').select('key').execute()).toEqual([]);
      for (const [d, text] of [
        [b.d, 'the kept project'],
        [reuser.d, 'reused by a later build'],
      ] as const) {
        const page = await s.fetchFromEdge(d.url);
        expect(page.status).toBe(200);
        expect(await page.text()).toBe(text);
      }
      expect(await (await s.fetchFromEdge(`${b.d.url.replace(/\/$/, '')}/shared.js`)).text()).toBe(
        'shared by both projects',
      );
      // Nothing more to do: the next collection lists the manifests and stops.
      expect((await collectStorage(at)).artifacts).toEqual({
        manifests: 0,
        condemned: 0,
        blobs: 0,
        spared: 0,
      });
    });

    it('spares a condemned blob that a live manifest lists again by the time it is due', async () => {
      const deps = s.running.deps;
      const store = blobStoreOf(deps.config);
      const artifacts = createArtifactStore(store);
      const dir = tempDir({ 'late.html': 'listed again before it was due' });
      const key = blob('listed again before it was due');
      // Condemned a grace period ago while unlisted, as a build that had just found the blob
      // (before it was condemned, so it did not rescue it) would leave it.
      const since = new Date(Date.now() - collectionGraceMs(deps.config) - 1000).toISOString();
      await store.putIfAbsent(key, { bytes: 'listed again before it was due' });
      await deps.db.insertInto('condemned_blobs').values({ key, since }).execute();
      // That build's manifest, written since: young at this collection, so live.
      await artifacts.storeDirectory(dir, { maxBytes: 1e6, maxFiles: 10 });
      const done = await collectStorage(deps);
      expect(done.artifacts).toMatchObject({ blobs: 0, spared: 1 });
      expect(await store.head(key)).not.toBeNull();
    });
    it('removes blobs no manifest ever listed a grace period after it finds them, never one a build referenced meanwhile', async () => {
      const deps = s.running.deps;
      const store = blobStoreOf(deps.config);
      const has = async (key: string) => (await store.head(key)) !== null;
      const rows = async () =>
        new Set((await deps.db.selectFrom('condemned_blobs').select('key').execute()).map((r) => r.key));
      const texts = {
        crashed: 'written by a build that crashed before its manifest',
        after: 'found by a build that looks after the sweep',
        before: 'found by a build that looked just before the sweep',
      };
      // Blobs no manifest lists, as a crashed build (or an upload deployment never created) leaves them.
      for (const text of Object.values(texts)) await store.putIfAbsent(blob(text), { bytes: text });
      const grace = collectionGraceMs(deps.config);
      const clock = new ManualClock(new Date(Date.now() + grace + 60_000).toISOString());
      const at = { ...deps, clock } as Deps;
      const marked = clock.now().toISOString();

      const sweep = await collectStorage(at, undefined, { unlisted: true });
      expect(sweep.artifacts.condemned).toBeGreaterThanOrEqual(3);
      expect(sweep.artifacts.blobs).toBe(0);
      const condemned = await rows();
      for (const text of Object.values(texts)) expect(condemned.has(blob(text))).toBe(true);
      // Listed blobs are never condemned.
      expect(condemned.has(blob('shared by both projects'))).toBe(false);

      // Builds reference two of them now. One looks for its blobs after the sweep: its rescue
      // takes the blob off the list. The other looked just before the sweep marked it (its
      // rescue found no row): the row is put back as it would then be.
      const { token, orgId } = await s.user();
      const api = s.client(token);
      const deploy = async (name: string, text: string) => {
        const repo = createGitRepo({ files: { 'index.html': text } });
        repos.push(repo);
        const project = await api.projects.create({ name, repositoryUrl: repo.url, organizationId: orgId });
        const d = await deploymentDone(api, (await api.deployments.create(project.id)).id);
        expect(d.status, d.errorMessage ?? '').toBe('live');
        return d;
      };
      const after = await deploy('after-sweep', texts.after);
      expect((await rows()).has(blob(texts.after))).toBe(false);
      const before = await deploy('before-sweep', texts.before);
      await deps.db
        .insertInto('condemned_blobs')
        .values({ key: blob(texts.before), since: marked })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();

      // A grace period later: the crashed build's blob goes; the referenced ones stay.
      // (Earlier tests may have left blobs of their own on the list: they go too.)
      clock.advance(grace + 60_000);
      const listed = await rows();
      expect(listed.has(blob(texts.crashed)) && listed.has(blob(texts.before))).toBe(true);
      const due = await collectStorage(at, undefined, { unlisted: true });
      expect(due.artifacts).toMatchObject({ blobs: listed.size - 1, spared: 1 });
      expect(await has(blob(texts.crashed))).toBe(false);
      expect(await has(blob(texts.after))).toBe(true);
      expect(await has(blob(texts.before))).toBe(true);
      const left = await rows();
      for (const text of Object.values(texts)) expect(left.has(blob(text))).toBe(false);
      for (const [d, text] of [
        [after, texts.after],
        [before, texts.before],
      ] as const) {
        const page = await s.fetchFromEdge(d.url);
        expect(page.status).toBe(200);
        expect(await page.text()).toBe(text);
      }
    });
  });

  describe.skipIf(Boolean(backend.skip))(`build cache collection (${backend.name})`, () => {
    let prefixes = 0;
    const open = (dir: string): BuildCacheStore =>
      backend.name === 'local directory'
        ? createBuildCacheStore(dir, { maxBytesPerProject: 1e6 })
        : createStoredBuildCacheStore(createS3BlobStore(s3!.config(`cachegc${++prefixes}`)), {
            maxBytesPerProject: 1e6,
            localDir: dir,
          });

    it('removes the caches of deleted projects and those unused since the cut-off, and keeps the rest', async () => {
      const store = open(tempDir());
      const fill = (text: string) => async (into: string) => {
        writeFileSync(join(into, 'f'), text);
        return { f: { files: 1, bytes: text.length } };
      };
      await store.save('prj_deleted', 'production:main', 'k', 1e6, fill('deleted'));
      await store.save('prj_live', 'production:main', 'k', 1e6, fill('live main'));
      await store.save('prj_live', 'preview:old', 'k', 1e6, fill('old'));
      const lane = (l: string) => [{ lane: l }];
      // Nothing is unused yet: only the deleted project's cache goes.
      expect(
        await store.collect({
          liveProjectIds: new Set(['prj_live']),
          unusedBefore: new Date(Date.now() - DAY),
        }),
      ).toEqual({ caches: 1, bytes: 'deleted'.length });
      expect(await store.find('prj_deleted', lane('production:main'), 'k')).toBeNull();
      expect(await store.usage(['prj_deleted'])).toBe(0);
      // A cut-off in the future: every cache of the live project is unused since.
      expect(
        await store.collect({
          liveProjectIds: new Set(['prj_live']),
          unusedBefore: new Date(Date.now() + DAY),
        }),
      ).toEqual({ caches: 2, bytes: 'live main'.length + 'old'.length });
      expect(await store.find('prj_live', lane('production:main'), 'k')).toBeNull();
      expect(await store.usage(['prj_live'])).toBe(0);
    });
  });
}

it('migration 027 runs on a database already at 028 (it landed after it)', async () => {
  await withMigratingStore('slipway-condemned-migration-', async ({ store }) => {
    const cipher = createCipher(Buffer.alloc(32, 7));
    const all = allMigrations(store.dialect, cipher);
    const { '027_condemned_blobs': _skipped, ...before } = all;
    const older = new Migrator({ db: store.db, provider: { getMigrations: async () => before } });
    expect((await older.migrateToLatest()).error).toBeUndefined();
    expect(await store.migrate(cipher)).toEqual(['027_condemned_blobs']);
    await store.db.insertInto('condemned_blobs').values({ key: 'blobs/ab/x', since: 'now' }).execute();
  });
});

it('docs/operating.md’s retention settings, run as written, are what the service reads', async () => {
  const doc = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8');
  const at = doc.indexOf('### What is removed and when');
  expect(at).toBeGreaterThan(-1);
  const start = doc.indexOf('```sh\n', at) + '```sh\n'.length;
  const script = doc.slice(start, doc.indexOf('\n```', start));
  const run = await runShell(`${script}\nenv`, ROOT, { PATH: process.env.PATH });
  expect(run.code, run.stderr).toBe(0);
  const env = Object.fromEntries(
    run.stdout
      .split('\n')
      .filter((l) => l.startsWith('SLIPWAY_'))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const config = loadConfig({ ...env, SLIPWAY_DATA_DIR: tempDir() });
  expect(config.artifactRetentionMs).toBe(90 * DAY);
  expect(config.buildCache.ttlMs).toBe(14 * DAY);
  expect(loadConfig({ SLIPWAY_DATA_DIR: tempDir() })).toMatchObject({
    artifactRetentionMs: 30 * DAY,
    buildCache: { ttlMs: 7 * DAY },
  });
});
