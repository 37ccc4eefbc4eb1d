import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { blobStoreOf } from '../../server/platform/storage/open-blob-store.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

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

let s3: S3Server | undefined;
beforeAll(async () => {
  if (!s3ServerMissing) s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.stop();
});

/** Where the service keeps its caches: the artifacts directory, or the bucket (SLIPWAY_OBJECT_STORAGE). */
const backends = [
  { name: 'local directory', skip: '', env: (): Record<string, string> => ({}) },
  { name: `object storage${s3ServerMissing}`, skip: s3ServerMissing, env: () => s3!.env('stack/') },
];

for (const backend of backends) {
  /** The build cache through the whole service: saved once the deployment is live, then hit. */
  describe.skipIf(Boolean(backend.skip))(
    `the build cache in the service (${backend.name})`,
    { timeout: 120_000 },
    () => {
      let s: Stack;
      let repo: GitRepo;
      let api: ReturnType<Stack['client']>;

      beforeAll(async () => {
        s = await startStack({ env: backend.env() });
        repo = createGitRepo({
          files: {
            '.npmrc': 'offline=true\naudit=false\nfund=false\n',
            'package.json': JSON.stringify(pkg),
            'package-lock.json': JSON.stringify(lock),
            'dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
            'dep/index.js': "module.exports = 'dep says hi';",
            'build.js':
              "require('fs').mkdirSync('dist', { recursive: true });\nrequire('fs').writeFileSync('dist/index.html', require('dep'));\n",
          },
        });
        const { token } = await s.user();
        api = s.client(token);
      });
      afterAll(async () => {
        await s?.stop();
        repo?.remove();
      });

      const deploy = async (projectId: string, body: Parameters<typeof api.deployments.create>[1] = {}) => {
        const created = await api.deployments.create(projectId, body);
        const done = await waitFor(
          `deployment ${created.id} to finish`,
          async (): Promise<Deployment | null> => {
            const d = await api.deployments.get(created.id);
            return d.status === 'live' || d.status === 'failed' ? d : null;
          },
          90_000,
        );
        // The save comes after live: wait until the log says what became of it.
        const log = await waitFor(`the build cache line of ${created.id}`, async () => {
          const { logs } = await api.deployments.logs(created.id, { tail: 1000 });
          return /Build cache: (saved|not saved)|Skipping install/.test(logs) ? logs : null;
        });
        return { d: done, lines: log.split('\n') };
      };

      it('saves the cache after the deployment is live, removes the workspace, and the next build hits', async () => {
        const orgId = (await api.user.get()).organizations[0]!.id;
        const project = await api.projects.create({
          name: 'cached',
          repositoryUrl: repo.url,
          organizationId: orgId,
        });
        const first = await deploy(project.id);
        expect(first.d.status).toBe('live');
        const live = first.lines.findIndex((l) => l.startsWith('==> Live at'));
        const saved = first.lines.findIndex((l) => /^Build cache: saved \d/.test(l));
        expect(live).toBeGreaterThan(-1);
        expect(saved).toBeGreaterThan(live);
        await waitFor(
          'the workspace to go',
          async () => !existsSync(join(s.dataDir, 'workspaces', first.d.id)),
        );
        if (backend.name !== 'local directory') {
          // In the bucket, an archive and its description; this worker's copy goes, as on a
          // worker that never built the project: the next build restores from the bucket.
          const keys: string[] = [];
          for await (const o of blobStoreOf(s.running.deps.config).list(`build-cache/${project.id}/`)) {
            keys.push(o.key.replace(/[^/]*\.(json|tar\.gz)$/, '*.$1'));
          }
          expect(keys.sort()).toEqual([
            expect.stringMatching(/^build-cache\/prj_[a-z0-9]+\/production-[0-9a-f]{24}\/\*\.json$/),
            expect.stringMatching(/\/\*\.tar\.gz$/),
          ]);
          rmSync(join(s.running.deps.config.buildCache.dir, project.id), { recursive: true, force: true });
        }

        const second = await deploy(project.id);
        expect(second.d.status).toBe('live');
        expect(second.lines).toContainEqual(expect.stringMatching(/^Build cache: hit, restored \d/));
        expect(second.lines).toContain(
          '==> Skipping install: node_modules restored from the build cache (package-lock.json unchanged)',
        );
        expect(await (await s.fetchFromEdge(second.d.url)).text()).toBe('dep says hi');
      });

      it('a production secret a build leaves in its cache never reaches a preview of another branch, nor a pull request’s ref', async () => {
        // The build writes the variable into a framework cache and prints what an earlier build left.
        const leaky = createGitRepo({
          files: {
            '.npmrc': 'offline=true\naudit=false\nfund=false\n',
            'package.json': JSON.stringify(pkg),
            'package-lock.json': JSON.stringify(lock),
            'dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
            'dep/index.js': "module.exports = 'dep';",
            'build.js': `
const fs = require('fs');
const file = 'node_modules/.cache/seen';
const seen = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : 'nothing';
console.log('the cache held: ' + seen);
fs.mkdirSync('node_modules/.cache', { recursive: true });
fs.writeFileSync(file, process.env.API_SECRET || 'no secret');
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync('dist/index.html', 'cache held ' + seen);
`,
          },
        });
        leaky.git('branch', 'feature');
        leaky.git('update-ref', 'refs/pull/3/head', 'HEAD');
        try {
          const orgId = (await api.user.get()).organizations[0]!.id;
          const project = await api.projects.create({
            name: 'leaky',
            repositoryUrl: leaky.url,
            organizationId: orgId,
          });
          await api.env.create(project.id, { key: 'API_SECRET', value: 'prod-only-4f9a', encrypted: true });
          await api.env.create(project.id, {
            key: 'API_SECRET',
            value: 'preview-7c21',
            encrypted: true,
            environment: 'preview',
          });

          const prod = await deploy(project.id);
          expect(prod.d.target).toBe('production');
          expect(prod.lines).toContain('the cache held: nothing');
          expect((await deploy(project.id)).lines).toContain('the cache held: ***');

          for (const branch of ['feature', 'refs/pull/3/head']) {
            const preview = await deploy(project.id, { branch });
            expect(preview.d.status).toBe('live');
            expect(preview.d.target).toBe('preview');
            expect(preview.lines.join('\n')).not.toContain('prod-only-4f9a');
            expect(preview.lines).toContain('the cache held: nothing');
            expect(await (await s.fetchFromEdge(preview.d.url)).text()).toBe('cache held nothing');
          }
          // The preview's own cache holds the preview's value (masked in its own log), never production's.
          const again = await deploy(project.id, { branch: 'feature' });
          expect(again.lines).toContain('the cache held: ***');
          expect(await (await s.fetchFromEdge(again.d.url)).text()).toBe('cache held preview-7c21');
        } finally {
          leaky.remove();
        }
      });
      // The bucket's side of the quota is the store's own test (build-cache.test.ts); this one reads the directory.
      it.skipIf(backend.skip !== '' || backend.name !== 'local directory')(
        'keeps an organization’s caches within its plan’s quota: saving one for a project evicts the organization’s oldest, of another project',
        async () => {
          const owner = await s.user();
          const ownerApi = s.client(owner.token);
          const make = (name: string) =>
            ownerApi.projects.create({ name, repositoryUrl: repo.url, organizationId: owner.orgId });
          const [a, b] = [await make('quota-a'), await make('quota-b')];
          const cacheDir = s.running.deps.config.buildCache.dir;
          const caches = (projectId: string) =>
            readdirSync(join(cacheDir, projectId))
              .filter((n) => n.endsWith('.json'))
              .map(
                (n) => JSON.parse(readFileSync(join(cacheDir, projectId, n), 'utf8')) as { bytes: number },
              );
          const deployAs = async (projectId: string) => {
            const created = await ownerApi.deployments.create(projectId, {});
            const d = await waitFor(
              `deployment ${created.id}`,
              async () => {
                const got = await ownerApi.deployments.get(created.id);
                return got.status === 'live' || got.status === 'failed' ? got : null;
              },
              90_000,
            );
            const logs = await waitFor(`the build cache line of ${created.id}`, async () => {
              const { logs } = await ownerApi.deployments.logs(created.id, { tail: 1000 });
              return /Build cache: (saved|not saved)/.test(logs) ? logs : null;
            });
            return { d, logs };
          };
          // The stack's users are on the enterprise plan (clear of the free plan's request rate).
          const plans = s.running.deps.config.plans;
          const before = plans.enterprise.cacheBytes;
          try {
            const first = await deployAs(a.id);
            expect(first.d.status).toBe('live');
            const [saved] = caches(a.id);
            expect(saved!.bytes).toBeGreaterThan(0);
            // Room for one project's cache, not two.
            plans.enterprise.cacheBytes = Math.floor(saved!.bytes * 1.5);
            const second = await deployAs(b.id);
            expect(second.d.status).toBe('live');
            expect(second.logs).toMatch(
              /Build cache: saved .* \(1 older cache of the organization evicted for the organization's build caches quota of .* \(enterprise plan\)\)/,
            );
            expect(caches(a.id)).toEqual([]);
            expect(caches(b.id)).toHaveLength(1);
            expect((await ownerApi.organizations.usage(owner.orgId)).buildCaches).toEqual({
              usedBytes: caches(b.id)[0]!.bytes,
              limitBytes: plans.enterprise.cacheBytes,
            });
            // A cache larger than the whole quota is not saved, and the build goes live all the same.
            plans.enterprise.cacheBytes = Math.max(1, Math.floor(saved!.bytes / 2));
            const third = await deployAs(a.id);
            expect(third.d.status).toBe('live');
            expect(third.logs).toContain('Build cache: miss');
            expect(third.logs).toMatch(
              /Build cache: not saved, .* is over the organization's build caches quota of .* \(enterprise plan\) on its own/,
            );
            expect(caches(a.id)).toEqual([]);
          } finally {
            plans.enterprise.cacheBytes = before;
          }
        },
      );
    },
  );
}
