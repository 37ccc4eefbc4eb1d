import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
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

/** The build cache through the whole service: saved once the deployment is live, then hit. */
describe('the build cache in the service', { timeout: 120_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let api: ReturnType<Stack['client']>;

  beforeAll(async () => {
    s = await startStack();
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

  const deploy = async (projectId: string) => {
    const created = await api.deployments.create(projectId);
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
    await waitFor('the workspace to go', async () => !existsSync(join(s.dataDir, 'workspaces', first.d.id)));

    const second = await deploy(project.id);
    expect(second.d.status).toBe('live');
    expect(second.lines).toContainEqual(expect.stringMatching(/^Build cache: hit, restored \d/));
    expect(second.lines).toContain(
      '==> Skipping install: node_modules restored from the build cache (package-lock.json unchanged)',
    );
    expect(await (await s.fetchFromEdge(second.d.url)).text()).toBe('dep says hi');
  });
});
