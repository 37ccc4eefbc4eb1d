import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_JOB } from '../../server/features/deployments/queue-deployment.ts';
import { createGitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A worker that stops while a build runs past SLIPWAY_SHUTDOWN_GRACE hands the build back to
 * the queue: the deployment is not failed, and the next worker to start builds it to live.
 */
describe('a build interrupted by shutdown', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-shutdown-'));
  const repo = createGitRepo({
    files: {
      'package.json': JSON.stringify({ name: 'slow', private: true, scripts: { build: 'node build.mjs' } }),
    },
  });
  // Builds read nothing of the host's disk but the repository they clone: the first attempt waits
  // while this file exists in it, the attempt after the restart finds it gone.
  const hold = join(repo.dir, '.git', 'hold');
  writeFileSync(hold, 'wait');
  repo.commit(
    {
      'build.mjs':
        "import { existsSync, mkdirSync, writeFileSync } from 'node:fs';\n" +
        "console.log('build started');\n" +
        `while (existsSync(${JSON.stringify(hold)})) await new Promise((r) => setTimeout(r, 20));\n` +
        "mkdirSync('dist', { recursive: true });\n" +
        "writeFileSync('dist/index.html', 'built after a restart');\n",
    },
    'build',
  );
  let stack: Stack | undefined;
  afterAll(async () => {
    await stack?.stop();
    repo.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is handed back, not failed, and the next worker finishes it', async () => {
    const env = { SLIPWAY_SHUTDOWN_GRACE: '200ms' };
    stack = await startStack({ dataDir, env });
    const user = await stack.user('shutdown@example.com');
    const api = stack.client(user.token);
    const project = await api.projects.create({
      name: 'interrupted',
      repositoryUrl: repo.url,
      organizationId: user.orgId,
    });
    const created = await api.deployments.create(project.id);
    await waitFor('the build to start', async () =>
      (await api.deployments.logs(created.id, { tail: 100 })).logs.includes('build started'),
    );

    const stopped = Date.now();
    await stack.stop();
    // The grace period, not the 30-second build, bounds the stop.
    expect(Date.now() - stopped).toBeLessThan(10_000);
    stack = undefined;

    rmSync(hold);
    stack = await startStack({ dataDir, env });
    const deps = stack.running.deps;
    const job = await deps.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'payload'])
      .where('kind', '=', BUILD_JOB)
      .execute();
    expect(job.filter((j) => JSON.parse(j.payload).deploymentId === created.id)).toHaveLength(1);

    const api2 = stack.client(user.token);
    const done = await waitFor(
      'the deployment to finish',
      async () => {
        const d = await api2.deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      30_000,
    );
    expect([done.status, done.errorMessage ?? null]).toEqual(['live', null]);
    const page = await stack.fetchFromEdge(done.url);
    expect(await page.text()).toBe('built after a restart');
    const log = (await api2.deployments.logs(created.id, { tail: 1000 })).logs;
    expect(log).toContain('==> Interrupted: this worker stopped; the build will run again');
    expect(log).toContain('==> Building again: an earlier attempt was interrupted');
    // The released job keeps its attempt count: a shutdown is not one of the build's tries. The
    // worker marks it done just after the deployment goes live: wait for that.
    const after = await waitFor('the build job to be done', async () => {
      const [row] = await deps.db
        .selectFrom('jobs')
        .select(['status', 'attempts', 'payload'])
        .where('kind', '=', BUILD_JOB)
        .execute()
        .then((rows) => rows.filter((j) => JSON.parse(j.payload).deploymentId === created.id));
      return row?.status === 'done' ? row : null;
    });
    expect(after.attempts).toBe(1);
  }, 60_000);
});
