import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let s: Stack;
let repo: GitRepo;
beforeAll(async () => {
  s = await startStack({ env: { SLIPWAY_BUILD_TIMEOUT: '1500ms' } });
  repo = createGitRepo({
    files: {
      'package.json': JSON.stringify({
        name: 'sleepy',
        private: true,
        scripts: { build: 'node -e "setTimeout(() => {}, 60000)"' },
      }),
    },
  });
});
afterAll(async () => {
  await s?.stop();
  repo?.remove();
});

it('fails a build that runs past SLIPWAY_BUILD_TIMEOUT, killing it', async () => {
  const { token, orgId } = await s.user();
  const api = s.client(token);
  const project = await api.projects.create({
    name: 'sleepy',
    repositoryUrl: repo.url,
    organizationId: orgId,
  });
  const started = Date.now();
  const d = await api.deployments.create(project.id);
  let current = d;
  while (current.status !== 'failed' && current.status !== 'live' && Date.now() - started < 20_000) {
    await new Promise((r) => setTimeout(r, 100));
    current = await api.deployments.get(d.id);
  }
  expect(current.status).toBe('failed');
  expect(current.errorMessage).toMatch(/Build exceeded the .* limit \(SLIPWAY_BUILD_TIMEOUT\)/);
  expect(Date.now() - started).toBeLessThan(10_000);
  const errors = await api.deployments.logs(d.id, { type: 'error' });
  expect(errors.logs).toMatch(/SLIPWAY_BUILD_TIMEOUT/);
});
