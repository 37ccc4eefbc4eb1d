import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

// dist/index.html is page.txt; a commit with gate.txt waits to build until the file it names exists.
const BUILD = `import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const gate = existsSync('gate.txt') ? readFileSync('gate.txt', 'utf8').trim() : '';
while (gate && !existsSync(gate)) await new Promise((r) => setTimeout(r, 20));
mkdirSync('dist', { recursive: true });
writeFileSync('dist/index.html', readFileSync('page.txt', 'utf8').trim());
`;

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
    // Two builds at once: a held build must not keep the next one waiting.
    s = await startStack({ env: { SLIPWAY_BUILD_CONCURRENCY: '2' } });
    repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({ name: 'shop', private: true, scripts: { build: 'node build.mjs' } }),
        'build.mjs': BUILD,
        'page.txt': 'production',
      },
    });
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
  /** Commits `text` as the page of `branch` (made from main if new), with `more` files. */
  const push = (branch: string, text: string, more: Record<string, string> = {}) => {
    const exists = repo.git('branch', '--list', branch) !== '';
    repo.git('checkout', '-q', ...(exists ? [branch] : ['-b', branch, 'main']));
    try {
      return repo.commit({ 'page.txt': text, 'gate.txt': '', ...more }, `${branch}: ${text}`);
    } finally {
      repo.git('checkout', '-q', 'main');
    }
  };
  /** Waits until deployment `id` is done; it must have gone live. */
  const live = async (id: string) => {
    const done = await deploymentDone(api, id);
    expect(done.errorMessage).toBeNull();
    expect(done.status).toBe('live');
    return done;
  };
  const deployPage = async (projectId: string, branch: string, text: string) => {
    const commitHash = push(branch, text);
    return live((await api.deployments.create(projectId, { branch, commitHash })).id);
  };
  /** A file whose creation releases the builds of commits gated on it (see BUILD). */
  const gate = () => {
    // Inside the repository's .git: builds see the host's disk only through the repository they
    // clone (bound read-only into their sandbox), where a file appearing later shows too.
    const dir = mkdtempSync(join(repo.dir, '.git', 'gate-'));
    chmodSync(dir, 0o755);
    const path = join(dir, 'open');
    return { path, release: () => writeFileSync(path, 'go') };
  };

  it('serves the newest live preview of feature/login at its branch URL, at once', async () => {
    const orgId = (await api.user.get()).organizations[0]!.id;
    const project = await api.projects.create({
      name: 'shop',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const production = await live((await api.deployments.create(project.id)).id);
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

  it('is not taken back by an older preview whose build finishes after a newer one', async () => {
    const orgId = (await api.user.get()).organizations[0]!.id;
    const project = await api.projects.create({
      name: 'race',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const held = gate();
    const olderCommit = push('feature/slow', 'older', { 'gate.txt': held.path });
    const older = await api.deployments.create(project.id, {
      branch: 'feature/slow',
      commitHash: olderCommit,
    });
    await waitFor('the older build to start', async () =>
      (await api.deployments.get(older.id)).status === 'building' ? true : null,
    );
    const newer = await deployPage(project.id, 'feature/slow', 'newer');
    expect(newer.branchUrl).toBe(older.branchUrl);
    expect(await body(newer.branchUrl!)).toBe('200 newer');

    held.release();
    const olderDone = await live(older.id);
    expect(olderDone.readyAt! > newer.readyAt!).toBe(true);
    expect(await body(older.url)).toBe('200 older');
    expect(await body(newer.branchUrl!)).toBe('200 newer');
  });
});
