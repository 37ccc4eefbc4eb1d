import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

/**
 * An npm workspaces monorepo whose server app imports a sibling package: installed once at the
 * root, frozen to its lockfile, and run with its workspace links kept inside the stored files.
 */
describe('a monorepo’s server app', { timeout: 120_000 }, () => {
  let s: Stack;
  let repo: GitRepo;

  beforeAll(async () => {
    repo = createGitRepo({
      files: {
        '.npmrc': 'offline=true\naudit=false\nfund=false\n',
        'package.json': JSON.stringify({ name: 'mono', private: true, workspaces: ['apps/*', 'packages/*'] }),
        'packages/ui/package.json': JSON.stringify({ name: '@acme/ui', version: '1.0.0', main: 'index.js' }),
        'packages/ui/index.js': "module.exports = { greet: () => 'hello from @acme/ui' };\n",
        'apps/web/package.json': JSON.stringify({
          name: 'web',
          version: '1.0.0',
          dependencies: { '@acme/ui': '1.0.0' },
          scripts: { start: 'node server.js' },
        }),
        'apps/web/server.js':
          "const { greet } = require('@acme/ui');\n" +
          "require('http').createServer((req, res) => res.end(greet())).listen(process.env.PORT);\n",
      },
    });
    // The lockfile npm writes for the workspaces (no registry needed: every package is local).
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund'], {
      cwd: repo.dir,
      stdio: 'ignore',
    });
    execFileSync('rm', ['-rf', 'node_modules'], { cwd: repo.dir });
    repo.commit({}, 'The lockfile');
    s = await startStack();
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  it('installs at the workspace root with npm ci and runs with its sibling package', async () => {
    const { token, orgId } = await s.user();
    const api = s.client(token);
    const project = await api.projects.create({
      name: 'mono-web',
      repositoryUrl: repo.url,
      organizationId: orgId,
      rootDirectory: 'apps/web',
    });
    const created = await api.deployments.create(project.id);
    const d = await deploymentDone(api, created.id);
    const { logs } = await api.deployments.logs(d.id, { tail: 1000 });
    expect(d.status, logs).toBe('live');
    expect(logs).toContain('==> Installing dependencies: npm ci');
    expect(logs).not.toContain('npm install');
    expect(logs).not.toMatch(/Left out .*node_modules\/@acme\/ui/);
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('hello from @acme/ui');
  });
});
