import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

/** What a deployment builds is decided when it is queued; a redeploy builds the same again. */
describe('build specs', { timeout: 120_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let api: ReturnType<Stack['client']>;

  beforeAll(async () => {
    s = await startStack();
    repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'spec',
          version: '1.0.0',
          scripts: { build: 'node build.js detected' },
        }),
        'version.txt': 'v1',
        'build.js':
          "const fs = require('fs');\nfs.mkdirSync('dist', { recursive: true });\n" +
          "fs.writeFileSync('dist/index.html', process.argv[2] + ' ' + fs.readFileSync('version.txt', 'utf8'));\n",
      },
    });
    api = s.client((await s.user()).token);
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  const finished = (id: string) => deploymentDone(api, id);
  const page = async (d: Deployment) => (await s.fetchFromEdge(d.url)).text();

  it('a redeploy builds the deployment’s own commit with the settings it was built with', async () => {
    const orgId = (await api.user.get()).organizations[0]!.id;
    const project = await api.projects.create({
      name: 'spec',
      repositoryUrl: repo.url,
      organizationId: orgId,
      buildCommand: 'node build.js first',
      outputDirectory: 'dist',
    });
    const first = await finished((await api.deployments.create(project.id)).id);
    expect(first.status).toBe('live');
    expect(await page(first)).toBe('first v1');

    // The project and its branch move on.
    await api.projects.update(project.id, { buildCommand: 'node build.js second' });
    repo.commit({ 'version.txt': 'v2' }, 'v2');

    const again = await api.deployments.redeploy(first.id);
    expect(again).toMatchObject({ status: 'queued', target: 'production', commitHash: first.commitHash });
    expect(again.message).toBe(`Redeploy of ${first.id}`);
    const redeployed = await finished(again.id);
    expect(redeployed.status).toBe('live');
    expect(await page(redeployed)).toBe('first v1');
    expect(redeployed.commitHash).toBe(first.commitHash);

    // A new deployment is built with what the project says now.
    const fresh = await finished((await api.deployments.create(project.id)).id);
    expect(await page(fresh)).toBe('second v2');
  });

  it('a deployment queued before a settings change builds with the settings it was queued with', async () => {
    // No worker yet: the deployment waits in the queue while the settings change.
    const front = await startStack({ roles: ['api', 'edge'] });
    let worker: Stack | undefined;
    try {
      const client = front.client((await front.user()).token);
      const orgId = (await client.user.get()).organizations[0]!.id;
      const project = await client.projects.create({
        name: 'queued-spec',
        repositoryUrl: repo.url,
        organizationId: orgId,
        buildCommand: 'node build.js queued',
        outputDirectory: 'dist',
      });
      const queued = await client.deployments.create(project.id);
      await client.projects.update(project.id, { buildCommand: 'node build.js changed' });
      // The worker makes it live through the front's edge.
      worker = await startStack({
        dataDir: front.dataDir,
        roles: ['worker'],
        env: { SLIPWAY_EDGE_INTERNAL_URL: front.edgeUrl },
      });
      const done = await deploymentDone(client, queued.id);
      expect(done).toMatchObject({ status: 'live', errorMessage: null });
      expect(await (await front.fetchFromEdge(done.url)).text()).toMatch(/^queued v/);
    } finally {
      await worker?.stop();
      await front.stop();
    }
  });

  it('names a deployment it cannot redeploy', async () => {
    const err = await api.deployments.redeploy('dpl_doesnotexist0000000').catch((e: Error) => e);
    expect(err).toMatchObject({ status: 404 });
  });
});
