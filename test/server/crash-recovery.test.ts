import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { createWorkspaceDisks } from '../../server/platform/sandbox/workspace-disk.ts';
import { createTestDatabase, testDialect, type TestDatabase } from '../helpers/database.ts';
import { createGitRepo } from '../helpers/git-repo.ts';
import { mountsUnder } from '../helpers/mounts.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * A worker killed with SIGKILL mid-build leaves nothing stuck: once its lease runs out another
 * worker claims the job again and the deployment goes live, and the workspace's file system the
 * dead worker left mounted is gone. Real processes, one database.
 */
describe('crash recovery', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-crash-'));
  const children: ChildProcess[] = [];
  let stack: Stack | undefined;
  let database: TestDatabase | undefined;
  const repo = createGitRepo({
    files: {
      'package.json': JSON.stringify({ name: 'slow', private: true, scripts: { build: 'node build.mjs' } }),
      'build.mjs':
        "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
        "console.log('build started');\n" +
        "await new Promise((r) => setTimeout(r, Number(process.env.BUILD_SLEEP_MS ?? '0')));\n" +
        "mkdirSync('dist', { recursive: true });\n" +
        "writeFileSync('dist/index.html', 'survived');\n",
    },
  });

  afterAll(async () => {
    for (const c of children) {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await stack?.stop();
    await database?.drop();
    repo.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function startWorker(env: Record<string, string>): ChildProcess {
    // Detached: its own process group, so SIGKILL takes the running build with it.
    const child = spawn(process.execPath, ['bin/slipway.js', 'serve', '--role', 'worker'], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
      detached: true,
    });
    children.push(child);
    return child;
  }

  it('finishes a build whose worker was killed', async () => {
    const edgePort = await findFreePort();
    // On the PostgreSQL run the workers must reach the same database as the API, so it is ours.
    if (testDialect() === 'postgres') database = await createTestDatabase();
    const env = {
      ...(database ? { DATABASE_URL: database.url } : {}),
      SLIPWAY_DATA_DIR: dataDir,
      SLIPWAY_EDGE_PORT: String(edgePort),
      SLIPWAY_JOB_LEASE: '1500ms',
      SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
    };
    // API and edge in this process; the workers are separate processes on the same database.
    stack = await startStack({ roles: ['api', 'edge'], dataDir, env });
    const { token, orgId } = await stack.user('crash@example.com');
    const api = stack.client(token);
    const project = await api.projects.create({
      name: 'slow',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    await api.env.create(project.id, { key: 'BUILD_SLEEP_MS', value: '60000' });
    const d = await api.deployments.create(project.id);

    const first = startWorker(env);
    const deadline = Date.now() + 20_000;
    while (!(await api.deployments.logs(d.id)).logs.includes('build started')) {
      if (Date.now() > deadline) throw new Error('the first worker never started the build');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await api.deployments.get(d.id)).status).toBe('building');
    process.kill(-first.pid!, 'SIGKILL');
    await new Promise((r) => first.once('exit', r));
    // The dead worker's workspace is still on disk, mounted where the kernel holds the disk limit.
    expect(readdirSync(join(dataDir, 'workspaces'))).toContain(d.id);
    const workspaces = join(dataDir, 'workspaces');
    const kernel =
      (
        await createWorkspaceDisks({
          limitBytes: 16 * 1024 ** 2,
          workspacesDir: join(dataDir, 'disk-probe'),
          mode: 'auto',
          isRoot: process.getuid?.() === 0,
        })
      ).mode === 'kernel';
    expect(await mountsUnder(workspaces)).toHaveLength(kernel ? 1 : 0);

    // A quick build this time: the retry must not wait another minute.
    await api.env.update(project.id, 'BUILD_SLEEP_MS', { value: '0' });
    startWorker(env);
    let status = '';
    while (Date.now() < deadline + 20_000) {
      status = (await api.deployments.get(d.id)).status;
      if (status === 'live' || status === 'failed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('live');
    const logs = (await api.deployments.logs(d.id, { tail: 1000 })).logs;
    expect(logs).toContain('==> Building again: an earlier attempt was interrupted');
    expect(await (await stack.fetchFromEdge((await api.deployments.get(d.id)).url)).text()).toBe('survived');
    // The deployment goes live before its build cache is saved; the job ends once the cache is
    // saved and the workspace removed.
    const buildJob = () =>
      stack!.running.deps.db
        .selectFrom('jobs')
        .selectAll()
        .where('kind', '=', 'deployment.build')
        .executeTakeFirstOrThrow();
    let job = await buildJob();
    while (job.status !== 'done' && Date.now() < deadline + 30_000) {
      await new Promise((r) => setTimeout(r, 100));
      job = await buildJob();
    }
    expect(job).toMatchObject({ status: 'done', attempts: 2 });
    // The retry cleared what the dead worker left behind, its mount included.
    expect(existsSync(join(dataDir, 'workspaces', d.id))).toBe(false);
    expect(await mountsUnder(workspaces)).toEqual([]);
  }, 60_000);
});
