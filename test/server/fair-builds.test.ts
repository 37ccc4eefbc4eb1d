import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Issue: a 1.2 s build of one organization waited 23-25 s behind another's six, and two hanging
 * builds blocked everyone. Here an organization on the free plan (builds=1) starts two builds
 * that hang; another organization's build still goes live at once, and the first never runs more
 * than one build at a time.
 */
describe('build slots shared between organizations', () => {
  const hanging = createGitRepo({
    files: {
      'package.json': JSON.stringify({ name: 'hang', private: true, scripts: { build: 'node build.mjs' } }),
    },
  });
  // Builds read nothing of the host's disk but the repository they clone: they wait while this
  // file exists in it.
  const hold = join(hanging.dir, '.git', 'hold');
  writeFileSync(hold, 'wait');
  hanging.commit(
    {
      'build.mjs':
        "import { existsSync, mkdirSync, writeFileSync } from 'node:fs';\n" +
        "console.log('build started');\n" +
        `while (existsSync(${JSON.stringify(hold)})) await new Promise((r) => setTimeout(r, 20));\n` +
        "mkdirSync('dist', { recursive: true });\n" +
        "writeFileSync('dist/index.html', 'released');\n",
    },
    'build',
  );
  const quick = createGitRepo({ files: { 'index.html': '<h1>quick</h1>' } });
  let stack: Stack | undefined;
  afterAll(async () => {
    rmSync(hold, { force: true });
    await stack?.stop();
    hanging.remove();
    quick.remove();
  });

  it("a free organization's hanging builds take one slot; another's build goes live beside them", async () => {
    stack = await startStack({ env: { SLIPWAY_BUILD_CONCURRENCY: '2' } });
    const hog = await stack.user('hog@example.com');
    const neighbour = await stack.user('neighbour@example.com');
    // startStack puts everyone on enterprise: the hog is on free (1 build at a time).
    await stack.running.deps.db
      .updateTable('organizations')
      .set({ plan: 'free' })
      .where('id', '=', hog.orgId)
      .execute();
    const hogApi = stack.client(hog.token);
    const hogProject = await hogApi.projects.create({
      name: 'hog',
      repositoryUrl: hanging.url,
      organizationId: hog.orgId,
    });
    const first = await hogApi.deployments.create(hogProject.id);
    const second = await hogApi.deployments.create(hogProject.id, { branch: 'main', target: 'preview' });
    // Watched in the database: the free plan allows the hog 100 requests an hour.
    const db = stack.running.deps.db;
    const statusOf = async (id: string) =>
      (await db.selectFrom('deployments').select('status').where('id', '=', id).executeTakeFirstOrThrow())
        .status;
    await waitFor('a hanging build to start', async () => (await statusOf(first.id)) === 'building');

    const api = stack.client(neighbour.token);
    const project = await api.projects.create({
      name: 'neighbour',
      repositoryUrl: quick.url,
      organizationId: neighbour.orgId,
    });
    const created = await api.deployments.create(project.id);
    const done = await deploymentDone(api, created.id, 60_000);
    expect(done.status).toBe('live');
    // The hog's second build is still waiting for its first: one slot was free all along.
    expect(await statusOf(second.id)).toBe('queued');
    expect(await statusOf(first.id)).toBe('building');

    rmSync(hold);
    const final = async (id: string) => {
      const s = await statusOf(id);
      return s === 'live' || s === 'failed' ? s : null;
    };
    expect(await waitFor('the first build', () => final(first.id), 60_000)).toBe('live');
    expect(await waitFor('the second build', () => final(second.id), 60_000)).toBe('live');
  });
});
