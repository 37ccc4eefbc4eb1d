import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../api/client/index.ts';
import type { Deployment } from '../../api/schemas/deployments.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { findFreePort } from '../../server/core/free-port.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { isGone } from '../helpers/process.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/**
 * The edge runs in this process (so the test can read its apps' pids); the API and worker run in
 * a `slipway serve` child process, and `slipway project suspend|resume` in children of their own,
 * all on one PostgreSQL database. The edge's own periodic check is turned off (10 minutes), so
 * only the notification from the other process can stop the apps in time.
 */
describe.skipIf(!url)(
  `suspending or deleting a project in another process stops its apps on the edge${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let root: string;
    let edge: Stack;
    let api: ChildProcess;
    let apiUrl: string;
    let repo: GitRepo;
    let token: string;
    let orgId: string;
    let baseEnv: Record<string, string>;

    const cleanEnv = (): NodeJS.ProcessEnv =>
      Object.fromEntries(
        Object.entries(process.env).filter(([k]) => !k.startsWith('SLIPWAY_') && k !== 'DATABASE_URL'),
      );

    beforeAll(async () => {
      database = await createTestDatabase();
      root = mkdtempSync(join(tmpdir(), 'slipway-suspend-'));
      // The sandbox's user passes through it to each process's data directory and workspaces.
      chmodSync(root, 0o711);
      const edgePort = await findFreePort();
      baseEnv = {
        DATABASE_URL: database.url,
        SLIPWAY_DB_POOL_SIZE: '4',
        SLIPWAY_ARTIFACTS_DIR: join(root, 'artifacts'),
        SLIPWAY_EDGE_PORT: String(edgePort),
        SLIPWAY_EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`,
        SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
        // Previews open without a sign-in, as in the other features' tests (docs/protection.md).
        SLIPWAY_DEFAULT_PROTECTION: 'none',
        HOST: '127.0.0.1',
      };
      // This process migrates the database first, and listens before anything is published.
      edge = await startStack({
        roles: ['edge'],
        dataDir: join(root, 'edge'),
        env: baseEnv,
        edge: { appCheckIntervalMs: 600_000 },
      });
      const apiPort = await findFreePort();
      apiUrl = `http://127.0.0.1:${apiPort}`;
      api = spawn(process.execPath, ['bin/slipway.js', 'serve', '--role', 'api', '--role', 'worker'], {
        env: {
          ...cleanEnv(),
          ...baseEnv,
          PORT: String(apiPort),
          SLIPWAY_DATA_DIR: join(root, 'api'),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', openSync(join(root, 'api.log'), 'a')],
      });
      await waitFor(
        'the API process to answer',
        async () => (await fetch(`${apiUrl}/healthz`).catch(() => null))?.ok,
        60_000,
      );
      ({ token, orgId } = await edge.user('suspend@example.com'));
      repo = createGitRepo({ fromFixture: 'node-server' });
    }, 120_000);

    afterAll(async () => {
      if (api && api.exitCode !== null && api.exitCode !== 0) {
        console.error(
          `the API process exited with ${api.exitCode}:\n${readFileSync(join(root, 'api.log'), 'utf8')}`,
        );
      }
      if (api?.exitCode === null) {
        await new Promise((r) => {
          api.once('exit', r);
          api.kill('SIGTERM');
        });
      }
      await edge?.stop();
      await database?.drop();
      repo?.remove();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    const client = () => createClient({ baseUrl: apiUrl, token });
    const status = (deploymentId: string) => edge.running.edge!.supervisor.status(deploymentId);

    async function deployApp(name: string): Promise<{ project: Project; deployment: Deployment }> {
      const project = await client().projects.create({
        name,
        repositoryUrl: repo.url,
        organizationId: orgId,
      });
      const created = await client().deployments.create(project.id);
      const deployment = await waitFor(
        `deployment ${created.id} to go live`,
        async () => {
          const d = await client().deployments.get(created.id);
          expect(d.status).not.toBe('failed');
          return d.status === 'live' && d;
        },
        30_000,
      );
      return { project: await client().projects.get(project.id), deployment };
    }

    async function visit(url: string, deploymentId: string): Promise<number> {
      const res = await edge.fetchFromEdge(url);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ path: '/', built: true });
      const pid = status(deploymentId)?.pid;
      expect(pid).toBeGreaterThan(0);
      expect(isGone(pid!)).toBe(false);
      return pid!;
    }

    /** Well under the edge's own check interval: only the notification can make it. */
    const expectStopped = (pid: number, deploymentId: string) =>
      waitFor(`process ${pid} to end`, () => isGone(pid) && status(deploymentId) === undefined, 5000);

    function cli(args: string[]): Promise<{ code: number | null; stderr: string }> {
      return new Promise((done, fail) => {
        const child = spawn(process.execPath, ['bin/slipway.js', ...args], {
          env: { ...cleanEnv(), ...baseEnv, SLIPWAY_DATA_DIR: join(root, 'cli'), LOG_LEVEL: 'silent' },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', fail);
        child.on('close', (code) => done({ code, stderr }));
      });
    }

    it('`slipway project suspend` stops the app at once; `resume` and a visit start it again', async () => {
      const { project, deployment } = await deployApp('cli-paused');
      const pid = await visit(deployment.url, deployment.id);

      const suspended = await cli(['project', 'suspend', project.id]);
      expect(suspended.code, suspended.stderr).toBe(0);
      await expectStopped(pid, deployment.id);
      expect((await edge.fetchFromEdge(deployment.url)).status).toBe(503);

      const resumed = await cli(['project', 'resume', project.id]);
      expect(resumed.code, resumed.stderr).toBe(0);
      await waitFor('the edge to serve the project again', async () => {
        const res = await edge.fetchFromEdge(project.deploymentUrl!);
        await res.arrayBuffer();
        return res.status === 200;
      });
      const again = status(deployment.id)?.pid;
      expect(again).toBeGreaterThan(0);
      expect(again).not.toBe(pid);
      expect(isGone(again!)).toBe(false);
    });

    it('DELETE /v1/projects/:id on the API process stops the app at once', async () => {
      const { project, deployment } = await deployApp('api-deleted');
      const pid = await visit(deployment.url, deployment.id);

      await client().projects.delete(project.id);
      await expectStopped(pid, deployment.id);
      expect((await edge.fetchFromEdge(deployment.url)).status).toBe(404);
    });
  },
);
