import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/** The whole path with nothing faked: a real git repo, the worker builds, the edge serves. */
describe('build and serve pipeline', () => {
  let s: Stack;
  let repo: GitRepo;
  let token: string;
  let orgId: string;

  beforeAll(async () => {
    s = await startStack();
    ({ token, orgId } = await s.user('builder@example.com'));
    repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({ name: 'site', private: true, scripts: { build: 'node build.mjs' } }),
        'build.mjs':
          "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
          "mkdirSync('dist', { recursive: true });\n" +
          "writeFileSync('dist/index.html', `<h1>${process.env.GREETING ?? 'hello'} v1</h1>`);\n" +
          "console.log('built with', process.env.GREETING);\n",
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  const api = () => s.client(token);

  async function waitFor(id: string, timeoutMs = 20_000): Promise<Deployment> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = await api().deployments.get(id);
      if (d.status === 'live' || d.status === 'failed' || Date.now() > deadline) return d;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('builds a commit, serves it at its URL and at the production URL', async () => {
    const project = await api().projects.create({
      name: 'site',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    await api().env.create(project.id, { key: 'GREETING', value: 'hi-secret', encrypted: true });
    const created = await api().deployments.create(project.id, { message: 'first' });
    expect(created.status).toBe('queued');
    const live = await waitFor(created.id);
    expect(live.status).toBe('live');
    expect(live.commitHash).toBe(repo.git('rev-parse', 'HEAD'));
    expect(live.author).toBe('author@example.com');
    expect(live.buildDurationMs).toBeGreaterThan(0);
    expect(live.deployDurationMs).not.toBeNull();
    expect(live.readyAt).not.toBeNull();

    const page = await s.fetchFromEdge(live.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<h1>hi-secret v1</h1>');

    const p = await api().projects.get(project.id);
    // What was detected stays with the deployment; the project's setting stays unset.
    expect(live.framework).toBe('static');
    expect(p).toMatchObject({ framework: 'static', frameworkSetting: null });
    expect(p.deploymentUrl).toBe(`http://site.localhost:${s.edgePort}`);
    const prod = await s.fetchFromEdge(p.deploymentUrl!);
    expect(await prod.text()).toBe('<h1>hi-secret v1</h1>');

    const logs = await api().deployments.logs(created.id, { tail: 1000 });
    expect(logs.logs).toMatch(/Detected framework/);
    // The secret's value never reaches the log.
    expect(logs.logs).toContain('built with ***');
    expect(logs.logs).not.toContain('hi-secret');
  });

  it('fails a broken build with its error and log', async () => {
    const broken = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'broken',
          private: true,
          scripts: { build: 'node -e "process.exit(3)"' },
        }),
      },
    });
    try {
      const project = await api().projects.create({
        name: 'broken',
        repositoryUrl: broken.url,
        organizationId: orgId,
      });
      const d = await waitFor((await api().deployments.create(project.id)).id);
      expect(d.status).toBe('failed');
      expect(d.errorMessage).toBe('Building failed: "npm run build" exited with code 3.');
      // What was checked out is kept, though the build failed after it.
      expect(d.commitHash).toBe(broken.git('rev-parse', 'HEAD'));
      expect(d.commitMessage).toBe(broken.git('log', '-1', '--format=%s'));
      expect(d.author).toBe(broken.git('log', '-1', '--format=%ae'));
      const errors = await api().deployments.logs(d.id, { type: 'error' });
      expect(errors.logs.length).toBeGreaterThan(0);
      // The build log ends saying that it failed and why.
      const all = (await api().deployments.logs(d.id, { tail: 1000 })).logs.trimEnd().split('\n');
      expect(all.at(-1)).toBe('==> Deployment failed: Building failed: "npm run build" exited with code 3.');
      expect((await s.fetchFromEdge(d.url)).status).toBe(404);
    } finally {
      broken.remove();
    }
  });

  it('builds a pinned commit and a pull-request ref, as previews', async () => {
    const project = await api().projects.create({
      name: 'pinned',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const first = repo.git('rev-parse', 'HEAD');
    repo.commit({ 'build.mjs': repo.git('show', 'HEAD:build.mjs').replace('v1', 'v2') }, 'v2');
    repo.git('update-ref', 'refs/pull/7/head', repo.git('rev-parse', 'HEAD'));
    repo.git('reset', '-q', '--hard', first);

    const pinned = await waitFor(
      (await api().deployments.create(project.id, { commitHash: first.slice(0, 10) })).id,
    );
    expect(pinned.status).toBe('live');
    expect(pinned.commitHash).toBe(first);
    expect(await (await s.fetchFromEdge(pinned.url)).text()).toBe('<h1>hello v1</h1>');

    const pr = await waitFor((await api().deployments.create(project.id, { branch: 'refs/pull/7/head' })).id);
    expect(pr.status).toBe('live');
    expect(pr.target).toBe('preview');
    expect(await (await s.fetchFromEdge(pr.url)).text()).toBe('<h1>hello v2</h1>');
    // A preview does not change production.
    const p = await api().projects.get(project.id);
    expect(p.productionDeploymentId).toBe(pinned.id);
  });

  it('promote and rollback change what the production host serves, without rebuilding', async () => {
    const project = await api().projects.create({
      name: 'flip',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const v1 = await waitFor((await api().deployments.create(project.id)).id);
    repo.commit({ 'build.mjs': repo.git('show', 'HEAD:build.mjs').replace('v1', 'v3') }, 'v3');
    repo.git('branch', '-f', 'feature', 'HEAD');
    repo.git('reset', '-q', '--hard', 'HEAD~1');
    const preview = await waitFor((await api().deployments.create(project.id, { branch: 'feature' })).id);
    expect(preview.status).toBe('live');
    const prodUrl = (await api().projects.get(project.id)).deploymentUrl!;
    expect(await (await s.fetchFromEdge(prodUrl)).text()).toBe('<h1>hello v1</h1>');

    const promoted = await api().deployments.promote(preview.id);
    expect(promoted.target).toBe('production');
    expect(await (await s.fetchFromEdge(prodUrl)).text()).toBe('<h1>hello v3</h1>');

    const started = Date.now();
    const rollback = await api().deployments.rollback(preview.id);
    expect(rollback.rollbackFrom).toBe(preview.id);
    const back = await waitFor(rollback.id);
    expect(back.status).toBe('live');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(back.commitHash).toBe(v1.commitHash);
    const logs = await api().deployments.logs(back.id);
    expect(logs.logs).toMatch(/no rebuild/);
    expect(await (await s.fetchFromEdge(prodUrl)).text()).toBe('<h1>hello v1</h1>');
  });
});
