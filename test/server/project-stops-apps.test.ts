import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { setProjectStatus } from '../../server/features/deployments/projects/set-project-status.ts';
import { databaseUrlOf } from '../helpers/database.ts';
import { isGone } from '../helpers/process.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BIN = resolve(import.meta.dirname, '../../bin/slipway.js');

/**
 * A real server app (test/fixtures/apps/node-server) built from a real repository, started by the
 * edge on its first request; suspending or deleting its project must end its process at once.
 */
describe('suspending or deleting a project stops its server apps', () => {
  let s: Stack;
  let repo: GitRepo;
  let token: string;
  let orgId: string;

  beforeAll(async () => {
    s = await startStack();
    ({ token, orgId } = await s.user('apps@example.com'));
    repo = createGitRepo({ fromFixture: 'node-server' });
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  const api = () => s.client(token);
  const status = (deploymentId: string) => s.running.edge!.supervisor.status(deploymentId);

  async function deployApp(name: string): Promise<{ project: Project; deployment: Deployment }> {
    const project = await api().projects.create({ name, repositoryUrl: repo.url, organizationId: orgId });
    const created = await api().deployments.create(project.id);
    const deployment = await waitFor(
      `deployment ${created.id} to go live`,
      async () => {
        const d = await api().deployments.get(created.id);
        expect(d.status).not.toBe('failed');
        return d.status === 'live' && d;
      },
      30_000,
    );
    return { project: await api().projects.get(project.id), deployment };
  }

  /** Visits the app through the edge and returns the pid of its running process. */
  async function visit(url: string, deploymentId: string): Promise<number> {
    const res = await s.fetchFromEdge(`${url}/hello`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: '/hello', built: true });
    const pid = status(deploymentId)?.pid;
    expect(pid).toBeGreaterThan(0);
    expect(isGone(pid!)).toBe(false);
    return pid!;
  }

  async function expectStopped(pid: number, deploymentId: string) {
    await waitFor(`process ${pid} to end`, () => isGone(pid) && status(deploymentId) === undefined, 10_000);
  }

  it('suspending stops the app and its URLs answer "suspended"; resuming and visiting starts it again', async () => {
    const { project, deployment } = await deployApp('paused');
    const pid = await visit(deployment.url, deployment.id);

    await setProjectStatus(s.running.deps, project.id, 'suspended');
    await expectStopped(pid, deployment.id);
    for (const url of [deployment.url, project.deploymentUrl!]) {
      const page = await s.fetchFromEdge(url);
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('Project suspended');
    }
    // The page is all a visit gets: nothing started the app again.
    expect(status(deployment.id)).toBeUndefined();

    await setProjectStatus(s.running.deps, project.id, 'active');
    const again = await visit(project.deploymentUrl!, deployment.id);
    expect(again).not.toBe(pid);
  });

  it('deleting through the API stops the app; its URLs answer 404', async () => {
    const { project, deployment } = await deployApp('doomed');
    const pid = await visit(deployment.url, deployment.id);

    await api().projects.delete(project.id);
    await expectStopped(pid, deployment.id);
    expect((await s.fetchFromEdge(deployment.url)).status).toBe(404);
    expect((await s.fetchFromEdge(project.deploymentUrl!)).status).toBe(404);
    expect(status(deployment.id)).toBeUndefined();
  });

  it('only the suspended project stops: the apps of others keep running', async () => {
    const kept = await deployApp('bystander');
    const paused = await deployApp('paused-too');
    const keptPid = await visit(kept.deployment.url, kept.deployment.id);
    const pausedPid = await visit(paused.deployment.url, paused.deployment.id);

    await setProjectStatus(s.running.deps, paused.project.id, 'suspended');
    await expectStopped(pausedPid, paused.deployment.id);
    expect(isGone(keptPid)).toBe(false);
    expect(status(kept.deployment.id)?.pid).toBe(keptPid);
    expect(await visit(kept.deployment.url, kept.deployment.id)).toBe(keptPid);
  });

  it('`slipway project suspend` in another process stops the app; `resume` lets a visit start it again', async () => {
    const { project, deployment } = await deployApp('by-cli');
    const pid = await visit(deployment.url, deployment.id);

    const suspended = await cli(['project', 'suspend', 'by-cli']);
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(suspended.stderr).toContain('Project by-cli is suspended.');
    await expectStopped(pid, deployment.id);
    expect((await s.fetchFromEdge(project.deploymentUrl!)).status).toBe(503);

    const resumed = await cli(['project', 'resume', project.id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = await waitFor('the project to serve again', async () => {
      const res = await s.fetchFromEdge(project.deploymentUrl!);
      await res.arrayBuffer();
      return res.status === 200;
    });
    expect(again).toBe(true);
    const newPid = status(deployment.id)?.pid;
    expect(newPid).toBeGreaterThan(0);
    expect(newPid).not.toBe(pid);
    expect(isGone(newPid!)).toBe(false);
  });

  /**
   * The real CLI as a child process on the stack's database: the SQLite file in its data dir, or
   * the stack's PostgreSQL database on the suite's PostgreSQL run.
   */
  function cli(args: string[]): Promise<{ code: number | null; stderr: string }> {
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('SLIPWAY_') && k !== 'DATABASE_URL'),
    );
    Object.assign(env, {
      SLIPWAY_DATA_DIR: s.dataDir,
      // The stack's key (test/helpers/stack.ts): the CLI must not write a key file of its own.
      SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      LOG_LEVEL: 'silent',
    });
    const databaseUrl = databaseUrlOf(s.dataDir);
    if (databaseUrl) env.DATABASE_URL = databaseUrl;
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stderr }));
    });
  }
});
