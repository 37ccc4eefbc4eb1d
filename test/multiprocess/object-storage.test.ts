import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';
import { findFreePort } from '../../server/core/free-port.ts';
import { createDeps } from '../../server/runtime.ts';
import type { Deps } from '../../server/platform/deps/deps.ts';
import { createToken } from '../../server/features/identity/users/create-token.ts';
import { findOrCreateUser } from '../../server/features/identity/users/find-or-create-user.ts';
import { hashKey } from '../../server/platform/storage/blob-store.ts';
import { createS3BlobStore } from '../../server/platform/storage/s3-blob-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { edgeRequest } from '../helpers/edge.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;
const skip = !url ? ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)' : s3ServerMissing;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * An API, a worker and an edge process (`slipway serve --role ...`), each with a data directory
 * and artifacts directory of its own: nothing on disk is shared. PostgreSQL coordinates them and
 * an S3-compatible server (s3rver) holds the artifacts and uploads.
 */
describe.skipIf(Boolean(skip))(`object storage across processes with no shared directory${skip}`, () => {
  let database: TestDatabase;
  let s3: S3Server;
  let root: string;
  let deps: Deps;
  let repo: GitRepo;
  let api: string;
  let edgePort: number;
  let token: string;
  let orgId: string;
  const procs = new Map<string, ChildProcess>();
  let env: Record<string, string>;

  function start(name: string, role: string, env: Record<string, string>): void {
    const child = spawn(process.execPath, ['bin/slipway.js', 'serve', '--role', role], {
      env: { ...process.env, ...env, SLIPWAY_DATA_DIR: join(root, name) },
      stdio: ['ignore', 'ignore', openSync(join(root, `${name}.log`), 'a')],
      detached: true,
    });
    procs.set(name, child);
  }

  const up = (u: string) =>
    waitFor(`${u} to answer`, async () => (await fetch(`${u}/healthz`).catch(() => null))?.ok, 60_000);

  beforeAll(async () => {
    database = await createTestDatabase();
    s3 = await startS3Server();
    root = mkdtempSync(join(tmpdir(), 'slipway-s3-procs-'));
    chmodSync(root, 0o711);
    edgePort = await findFreePort();
    const apiPort = await findFreePort();
    env = {
      ...s3.env('slipway'),
      DATABASE_URL: database.url,
      SLIPWAY_DB_POOL_SIZE: '4',
      SLIPWAY_EDGE_PORT: String(edgePort),
      SLIPWAY_EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`,
      SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      // Previews open without a sign-in, as in the other features' tests (docs/protection.md).
      SLIPWAY_DEFAULT_PROTECTION: 'none',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    deps = await createDeps(
      loadConfig({ ...env, SLIPWAY_DATA_DIR: join(root, 'driver'), LOG_LEVEL: 'silent' }),
      {
        log: pino({ level: 'silent' }),
      },
    );
    start('api', 'api', { ...env, PORT: String(apiPort) });
    start('worker', 'worker', env);
    start('edge', 'edge', env);
    api = `http://127.0.0.1:${apiPort}`;
    await up(api);
    const user = await findOrCreateUser(deps, 'objects@example.com');
    token = (await createToken(deps, user.id, 'objects')).token;
    orgId = (
      await deps.db
        .selectFrom('organizations')
        .select('id')
        .where('personal_user_id', '=', user.id)
        .executeTakeFirstOrThrow()
    ).id;
    repo = createGitRepo({ files: { 'index.html': '<h1>from the bucket</h1>' } });
  }, 120_000);

  afterAll(async () => {
    for (const [name, child] of procs) {
      if (child.exitCode !== null && child.exitCode !== 0) {
        console.error(
          `${name} exited with ${child.exitCode}:\n${readFileSync(join(root, `${name}.log`), 'utf8').slice(-4000)}`,
        );
      }
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await deps?.store.close();
    await database?.drop();
    await s3?.stop();
    repo?.remove();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function call(method: string, path: string, body?: unknown, type = 'application/json') {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  }

  async function live(deploymentId: string): Promise<string> {
    return waitFor(
      `deployment ${deploymentId} to go live`,
      async () => {
        const row = await deps.db
          .selectFrom('deployments')
          .select(['status', 'host'])
          .where('id', '=', deploymentId)
          .executeTakeFirstOrThrow();
        expect(row.status).not.toBe('failed');
        return row.status === 'live' && row.host;
      },
      120_000,
    );
  }

  const edgeGet = async (host: string, path = '/') => {
    const res = await edgeRequest(edgePort, `${host}.localhost`, path);
    return { status: res.status, text: res.text };
  };

  it(
    'a worker builds into the bucket and an edge serves it from its own disk cache',
    { timeout: 180_000 },
    async () => {
      const project = await call('POST', '/v1/projects', {
        name: 'bucket-site',
        repositoryUrl: repo.url,
        framework: 'static',
        organizationId: orgId,
      });
      expect(project.status).toBe(201);
      const created = await call('POST', `/v1/projects/${project.body.data.id}/deployments`, {});
      expect(created.status).toBe(201);
      const host = await live(created.body.data.id);

      const page = await edgeGet(host);
      expect(page).toEqual({ status: 200, text: '<h1>from the bucket</h1>' });
      const key = hashKey('blobs', sha('<h1>from the bucket</h1>'));
      // In the bucket, in the edge's cache, and in no process's artifacts directory.
      expect(await createS3BlobStore(s3.config('slipway')).head(key)).toMatchObject({ size: 24 });
      expect(existsSync(join(root, 'edge', 'edge-cache', 'objects', key))).toBe(true);
      for (const name of ['api', 'worker', 'edge'])
        expect(existsSync(join(root, name, 'artifacts', 'blobs'))).toBe(false);
    },
  );

  it(
    'a file uploaded to the API process is built by the worker and served by the edge',
    { timeout: 180_000 },
    async () => {
      const project = await call('POST', '/v1/projects', {
        name: 'uploaded',
        framework: 'static',
        organizationId: orgId,
      });
      expect(project.status).toBe(201);
      const pid = project.body.data.id as string;
      const text = '<h1>uploaded through object storage</h1>';
      expect(
        (await call('PUT', `/v1/projects/${pid}/files/${sha(text)}`, text, 'application/octet-stream'))
          .status,
      ).toBe(201);
      expect(await createS3BlobStore(s3.config('slipway')).head(hashKey('uploads', sha(text)))).toMatchObject(
        {
          size: text.length,
        },
      );
      const created = await call('POST', `/v1/projects/${pid}/deployments`, {
        files: [{ path: 'index.html', sha256: sha(text), size: text.length }],
      });
      expect(created.status).toBe(201);
      const host = await live(created.body.data.id);
      expect(await edgeGet(host)).toEqual({ status: 200, text });
      expect(existsSync(join(root, 'api', 'artifacts', 'uploads'))).toBe(false);
      // Prebuilt: stored by its list, the one new content copied from the upload in the bucket.
      const other = '<h1>prebuilt through object storage</h1>';
      expect(
        (await call('PUT', `/v1/projects/${pid}/files/${sha(other)}`, other, 'application/octet-stream'))
          .status,
      ).toBe(201);
      const prebuilt = await call('POST', `/v1/projects/${pid}/deployments`, {
        prebuilt: true,
        files: [
          { path: 'index.html', sha256: sha(other), size: other.length },
          { path: 'old.html', sha256: sha(text), size: text.length },
        ],
      });
      expect(prebuilt.status).toBe(201);
      const prebuiltHost = await live(prebuilt.body.data.id);
      expect(await edgeGet(prebuiltHost)).toEqual({ status: 200, text: other });
      expect(await edgeGet(prebuiltHost, '/old.html')).toEqual({ status: 200, text });
      expect(await createS3BlobStore(s3.config('slipway')).head(hashKey('blobs', sha(other)))).toMatchObject({
        size: other.length,
      });
    },
  );

  it(
    'a second worker with an empty disk restores the build cache the first one saved in the bucket',
    { timeout: 180_000 },
    async () => {
      // A node project whose install is offline: its one dependency is a folder of the repository.
      const built = createGitRepo({
        files: {
          '.npmrc': 'offline=true\naudit=false\nfund=false\n',
          'package.json': JSON.stringify({
            name: 'cached',
            version: '1.0.0',
            dependencies: { dep: 'file:dep' },
            scripts: { build: 'node build.js' },
          }),
          'package-lock.json': JSON.stringify({
            name: 'cached',
            version: '1.0.0',
            lockfileVersion: 3,
            requires: true,
            packages: {
              '': { name: 'cached', version: '1.0.0', dependencies: { dep: 'file:dep' } },
              dep: { version: '1.0.0' },
              'node_modules/dep': { resolved: 'dep', link: true },
            },
          }),
          'dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
          'dep/index.js': "module.exports = 'restored on another worker';",
          'build.js':
            "require('fs').mkdirSync('dist', { recursive: true });\nrequire('fs').writeFileSync('dist/index.html', require('dep'));\n",
        },
      });
      try {
        const project = await call('POST', '/v1/projects', {
          name: 'cached-across-workers',
          repositoryUrl: built.url,
          organizationId: orgId,
        });
        expect(project.status).toBe(201);
        const pid = project.body.data.id as string;
        // The save comes after live: wait until the log says what became of it.
        const deploy = async () => {
          const created = await call('POST', `/v1/projects/${pid}/deployments`, {});
          expect(created.status).toBe(201);
          const id = created.body.data.id as string;
          const host = await live(id);
          const logs = await waitFor(`the build cache line of ${id}`, async () => {
            const res = await call('GET', `/v1/deployments/${id}/logs?tail=1000`);
            const text = String(res.body?.data?.logs ?? '');
            return /Build cache: (saved|not saved)|Skipping install/.test(text) ? text : null;
          });
          return { host, lines: logs.split('\n') };
        };

        // Worker A builds, misses and saves into the bucket.
        const first = await deploy();
        expect(first.lines).toContain('Build cache: miss (none saved yet)');
        expect(first.lines).toContainEqual(expect.stringMatching(/^Build cache: saved \d/));
        const bucket = createS3BlobStore(s3.config('slipway'));
        const names: string[] = [];
        for await (const o of bucket.list(`build-cache/${pid}/`)) {
          if (o.key.endsWith('.json')) names.push(o.key.slice(o.key.lastIndexOf('/') + 1, -'.json'.length));
        }
        expect(names).toHaveLength(1);
        const name = names[0]!;
        const cacheA = join(root, 'worker', 'artifacts', 'build-cache', pid);
        const lockA = readFileSync(join(cacheA, name, 'src', 'node_modules', '.package-lock.json'), 'utf8');
        expect(JSON.parse(lockA)).toMatchObject({ packages: { 'node_modules/dep': { link: true } } });

        // Worker A stops; worker B starts with a data directory of its own, empty.
        const a = procs.get('worker')!;
        process.kill(-a.pid!, 'SIGTERM');
        await waitFor('worker A to exit', async () => a.exitCode !== null || a.signalCode !== null);
        expect(a.exitCode).toBe(0);
        const cacheB = join(root, 'worker-b', 'artifacts', 'build-cache');
        expect(existsSync(join(root, 'worker-b'))).toBe(false);
        start('worker-b', 'worker', env);
        expect(existsSync(join(cacheB, pid))).toBe(false);

        // Worker B builds the same commit: a hit, unpacked from the bucket into its own disk.
        const second = await deploy();
        expect(second.lines).toContainEqual(expect.stringMatching(/^Build cache: hit, restored \d/));
        expect(second.lines).toContain(
          '==> Skipping install: node_modules restored from the build cache (package-lock.json unchanged)',
        );
        expect(await edgeGet(second.host)).toEqual({ status: 200, text: 'restored on another worker' });
        expect(readdirSync(join(cacheB, pid))).toEqual(expect.arrayContaining([name, `${name}.json`]));
        // B's copy is the archive A saved, unpacked: its description and its files.
        expect(JSON.parse(readFileSync(join(cacheB, pid, `${name}.json`), 'utf8'))).toMatchObject({
          lane: 'production:main',
          trees: { 'src/node_modules': { files: 1 } },
        });
        expect(
          readFileSync(join(cacheB, pid, name, 'src', 'node_modules', '.package-lock.json'), 'utf8'),
        ).toBe(lockA);
        expect(readlinkSync(join(cacheB, pid, name, 'src', 'node_modules', 'dep'))).toBe(
          readlinkSync(join(cacheA, name, 'src', 'node_modules', 'dep')),
        );
      } finally {
        built.remove();
      }
    },
  );
});
