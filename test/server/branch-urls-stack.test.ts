import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

/**
 * Branch URLs through the whole service with real builds, asked of the edge as a browser would:
 * the edge caches routes for a minute (the default), so every change seen below came through the
 * routing signal, not expiry.
 */
describe('branch URLs through the stack', { timeout: 240_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let api: ReturnType<Stack['client']>;

  beforeAll(async () => {
    s = await startStack();
    repo = createGitRepo({ files: { 'index.html': 'production' } });
    const { token } = await s.user();
    api = s.client(token);
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  const body = async (url: string) => {
    const res = await s.fetchFromEdge(url);
    return `${res.status} ${await res.text()}`;
  };
  /** Commits `text` as the page of `branch` (made from main if new) and deploys it until done. */
  const deployPage = async (projectId: string, branch: string, text: string) => {
    const exists = repo.git('branch', '--list', branch) !== '';
    repo.git('checkout', '-q', ...(exists ? [branch] : ['-b', branch]));
    repo.commit({ 'index.html': text }, `${branch}: ${text}`);
    repo.git('checkout', '-q', 'main');
    const created = await api.deployments.create(projectId, { branch });
    const done = await deploymentDone(api, created.id);
    expect(done.errorMessage).toBeNull();
    expect(done.status).toBe('live');
    return done;
  };

  it('serves the newest live preview of feature/login at its branch URL, at once', async () => {
    const orgId = (await api.user.get()).organizations[0]!.id;
    const project = await api.projects.create({
      name: 'shop',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const production = await deploymentDone(api, (await api.deployments.create(project.id)).id);
    expect(production).toMatchObject({ status: 'live', target: 'production', branchUrl: null });
    const productionUrl = (await api.projects.get(project.id)).deploymentUrl!;
    expect(await body(productionUrl)).toBe('200 production');

    const branchUrl = `http://shop-git-feature-login.localhost:${s.edgePort}/`;
    // Asked before the branch has a preview: nothing there, and the answer is cached.
    expect(await body(branchUrl)).toMatch(/^404 /);

    const first = await deployPage(project.id, 'feature/login', 'login one');
    expect(first.branchUrl).toBe(branchUrl.replace(/\/$/, ''));
    expect(await body(branchUrl)).toBe('200 login one');

    const second = await deployPage(project.id, 'feature/login', 'login two');
    expect(second.branchUrl).toBe(first.branchUrl);
    expect(await body(branchUrl)).toBe('200 login two');
    // Each deployment's own URL keeps what it built.
    expect(await body(first.url)).toBe('200 login one');

    // A preview of another branch has its own branch URL and leaves this one be.
    const other = await deployPage(project.id, 'checkout', 'checkout page');
    expect(other.branchUrl).toBe(`http://shop-git-checkout.localhost:${s.edgePort}`);
    expect(await body(other.branchUrl!)).toBe('200 checkout page');
    expect(await body(branchUrl)).toBe('200 login two');

    // Production is unaffected.
    expect(await body(productionUrl)).toBe('200 production');
    expect((await api.projects.get(project.id)).deploymentUrl).toBe(productionUrl);
  });
});
