import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { findFreePort } from '../../server/lib/free-port.ts';
import { createDeps } from '../../server/runtime.ts';
import type { Deps } from '../../server/services/deps.ts';
import { createToken } from '../../server/services/users/create-token.ts';
import { findOrCreateUser } from '../../server/services/users/find-or-create-user.ts';
import { hashKey } from '../../server/storage/blob-store.ts';
import { createS3BlobStore } from '../../server/storage/s3-blob-store.ts';
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
    const env = {
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

  const edgeGet = async (host: string) => {
    const res = await edgeRequest(edgePort, `${host}.localhost`, '/');
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
    },
  );
});
