import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

/** A deploy hook over real HTTP: a real repository really built and served, twice. */
describe('deploy hooks build the branch head', { timeout: 180_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let api: ReturnType<Stack['client']>;

  beforeAll(async () => {
    s = await startStack();
    repo = createGitRepo({ files: { 'index.html': '<h1>first</h1>' } });
    const { token } = await s.user();
    api = s.client(token);
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  /** POSTs the hook's URL on this stack's API, as a cron's curl would: no token, no body. */
  const post = async (hookUrl: string) => {
    const res = await fetch(`${s.apiUrl}${new URL(hookUrl).pathname}`, { method: 'POST' });
    return {
      status: res.status,
      body: (await res.json()) as { data: { id: string; url: string; created: boolean } },
    };
  };

  it('a POST deploys the head of the branch to production; after a new commit, a POST deploys the new head', async () => {
    const orgId = (await api.user.get()).organizations[0]!.id;
    const project = await api.projects.create({
      name: 'hooked',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const hook = await api.deployHooks.create(project.id, { name: 'cms', branch: 'main' });

    const first = await post(hook.url);
    expect(first.status).toBe(201);
    const one = await deploymentDone(api, first.body.data.id);
    expect(one.errorMessage).toBeNull();
    expect(one).toMatchObject({
      status: 'live',
      target: 'production',
      commitHash: repo.git('rev-parse', 'HEAD'),
      message: 'Deploy hook "cms"',
    });
    expect(await (await s.fetchFromEdge(first.body.data.url)).text()).toBe('<h1>first</h1>');

    const head = repo.commit({ 'index.html': '<h1>second</h1>' }, 'Edited in the CMS');
    // The second call is the documentation's own example, run as written.
    const doc = readFileSync(join(import.meta.dirname, '../../docs/api/deploy-hooks.md'), 'utf8');
    const example = /```sh\n(curl -s -X POST "\$HOOK_URL")\n```/.exec(doc)![1]!;
    // Not execFileSync: the API answering curl runs in this process.
    const { stdout: out } = await promisify(execFile)('bash', ['-c', example], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOOK_URL: `${s.apiUrl}${new URL(hook.url).pathname}`,
      },
      encoding: 'utf8',
    });
    const second = (JSON.parse(out) as { data: { id: string; created: boolean } }).data;
    expect(second.created).toBe(true);
    expect(second.id).not.toBe(first.body.data.id);
    const two = await deploymentDone(api, second.id);
    expect(two).toMatchObject({ status: 'live', commitHash: head, commitMessage: 'Edited in the CMS' });
    const production = (await api.projects.get(project.id)).deploymentUrl!;
    expect(await (await s.fetchFromEdge(production)).text()).toBe('<h1>second</h1>');
    // The first deployment keeps its own URL and content.
    expect(await (await s.fetchFromEdge(first.body.data.url)).text()).toBe('<h1>first</h1>');

    // Revoked: the same URL finds nothing, and nothing is queued.
    await api.deployHooks.remove(project.id, hook.id);
    const revoked = await post(hook.url);
    expect(revoked.status).toBe(404);
    expect((await api.deployments.list(project.id)).meta.total).toBe(2);
  });
});
