import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const SERVER =
  'require("http").createServer((q, s) => s.end("app answered " + q.url)).listen(process.env.PORT);\n';

/**
 * The report: a static page was deployed, then the repository became a server app; the first
 * build had pinned `static` on the project, so the app's source was served. Detection runs on
 * every build unless the user sets a framework.
 */
describe('framework detection does not pin itself', { timeout: 120_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let api: ReturnType<Stack['client']>;

  beforeAll(async () => {
    s = await startStack();
    repo = createGitRepo({ files: { 'index.html': '<h1>static page</h1>' } });
    const { token } = await s.user();
    api = s.client(token);
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  const deploy = async (projectId: string) => {
    const created = await api.deployments.create(projectId);
    return waitFor(
      `deployment ${created.id} to finish`,
      async (): Promise<Deployment | null> => {
        const d = await api.deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      90_000,
    );
  };

  it('a static site that becomes a server app is run as one, and its source is not served', async () => {
    const orgId = (await api.user.get()).organizations[0]!.id;
    const project = await api.projects.create({
      name: 'becomes-app',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const first = await deploy(project.id);
    expect(first).toMatchObject({ status: 'live', framework: 'static' });
    expect(await (await s.fetchFromEdge(first.url)).text()).toBe('<h1>static page</h1>');
    // The seed's field reports what was detected; the setting stays unset.
    expect(await api.projects.get(project.id)).toMatchObject({ framework: 'static', frameworkSetting: null });

    repo.commit(
      {
        'package.json': JSON.stringify({ name: 'app', scripts: { start: 'node server.js' } }),
        'server.js': SERVER,
      },
      'Now a server app',
    );
    const second = await deploy(project.id);
    expect(second.errorMessage).toBeNull();
    expect(second).toMatchObject({ status: 'live', framework: 'node' });
    const log = (await api.deployments.logs(second.id, { tail: 500 })).logs;
    expect(log).toContain(`Detected framework changed: static for ${first.id}, node now.`);
    const production = (await api.projects.get(project.id)).deploymentUrl!;
    for (const path of ['/', '/server.js', '/package.json']) {
      const body = await (await s.fetchFromEdge(new URL(path, production).href)).text();
      expect(body).toBe(`app answered ${path}`);
    }
    // The first deployment keeps serving what it was.
    expect(await (await s.fetchFromEdge(first.url)).text()).toBe('<h1>static page</h1>');
    // The project reports the newest build's detection, and a setting wins until it is unset.
    expect(await api.projects.get(project.id)).toMatchObject({ framework: 'node', frameworkSetting: null });
    expect(await api.projects.update(project.id, { framework: 'static' })).toMatchObject({
      framework: 'static',
      frameworkSetting: 'static',
    });
    expect(await api.projects.update(project.id, { framework: null })).toMatchObject({
      framework: 'node',
      frameworkSetting: null,
    });
  });
});
