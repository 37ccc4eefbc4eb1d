import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import type { Project } from '../../api/schemas/projects.ts';
import type { GitRepo } from '../helpers/git-repo.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { ensureBundle } from './bundle.ts';
import { pushEvent, runAction } from './run-action.ts';
import { createSiteRepo, siteFiles, type SiteState } from './site.ts';

/** The action when things go wrong: a broken build, a failing health check, a build that never ends. */
describe('the action: failures', () => {
  let s: Stack;
  let gh: GitHubApi;
  let repo: GitRepo;
  let token: string;
  let project: Project;

  beforeAll(async () => {
    [, s, gh] = await Promise.all([ensureBundle(), startStack(), createGitHubApi()]);
    ({ token } = await s.user('failures@example.com'));
    repo = createSiteRepo();
    const me = await s.client(token).user.get();
    project = await s.client(token).projects.create({
      name: 'shaky',
      repositoryUrl: repo.url,
      organizationId: me.organizations[0]!.id,
    });
  }, 180_000);
  afterAll(async () => {
    await gh?.stop();
    await s?.stop();
    repo?.remove();
  });
  afterEach(() => {
    expect(gh.violations()).toEqual([]);
  });

  const api = () => s.client(token);
  /** Commits `state` on main and runs the action for a push of it. */
  const deployCommit = (state: SiteState, inputs: Record<string, string> = {}) => {
    const sha = repo.commit(siteFiles(state), `version ${state.version}`);
    const event = pushEvent({ sha, branch: 'main', message: `version ${state.version}` });
    return runAction({
      inputs: {
        'api-url': s.apiUrl,
        'api-token': token,
        project: project.id,
        'github-token': 'ghs_stand_in',
        'github-deployment': 'true',
        ...inputs,
      },
      event: event.event,
      env: { ...event.env, GITHUB_API_URL: gh.url },
    });
  };
  async function waitLive(id: string): Promise<Deployment> {
    for (;;) {
      const d = await api().deployments.get(id);
      if (d.status === 'live' || d.status === 'failed') return d;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('a failed build fails the step with the error message and the last log lines', async () => {
    // GitHub answers the final status 502 once: the action tries it again.
    let statusCalls = 0;
    gh.before = async ({ method, path }) => {
      if (method === 'POST' && path.endsWith('/statuses') && ++statusCalls === 2)
        return { status: 502, body: { message: 'Server Error' } };
    };
    const r = await deployCommit({ version: 'broken', fail: true }).finally(() => (gh.before = undefined));
    expect(r.code).toBe(1);
    const d = await api().deployments.get(r.outputs['deployment-id']!);
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toBeTruthy();
    expect(r.outputs.status).toBe('failed');
    expect(r.error).toContain(`Deployment ${d.id} failed: ${d.errorMessage}`);
    expect(r.error).toContain('Last lines of the build log:');
    expect(r.error).toContain('Error: this build is broken on purpose');
    expect(r.summary).toContain('❌ Failed');
    expect(r.summary).toContain('this build is broken on purpose');
    const statuses = gh.state.deployments.at(-1)!.statuses;
    expect(statuses.map((x) => x.state)).toEqual(['in_progress', 'failure']);
    expect(statuses[1]!.description).toContain(`Deployment ${d.id} failed`);
    expect(statusCalls).toBe(3);
    expect(r.stdout).not.toContain('::warning::');
  });

  it('rolls production back when the health check of a new production deployment fails', async () => {
    const good = await deployCommit({ version: 'good' });
    expect(good.error).toBeNull();
    const goodId = good.outputs['deployment-id']!;

    const r = await deployCommit(
      { version: 'sick', healthy: false },
      { 'health-check-path': '/health.json', 'rollback-on-failure': 'true' },
    );
    expect(r.code).toBe(1);
    const sick = r.outputs['rollback-from']!;
    expect(sick).toMatch(/^dpl_/);
    expect(sick).not.toBe(goodId);
    const back = await waitLive(r.outputs['deployment-id']!);
    expect(back).toMatchObject({ status: 'live', target: 'production', rollbackFrom: sick });
    expect(r.outputs).toMatchObject({ status: 'live', target: 'production' });
    const healthUrl = `${(await api().deployments.get(sick)).url}/health.json`;
    expect(r.error).toBe(
      `Health check of ${healthUrl} failed: HTTP 404. Production was rolled back from ${sick} to ${back.id}, which is live.`,
    );
    const p = await api().projects.get(project.id);
    expect(p.productionDeploymentId).toBe(back.id);
    expect(await (await s.fetchFromEdge(p.deploymentUrl!)).text()).toBe('<h1>good</h1>');
    expect(r.summary).toContain('| shaky | deploy | production |');
    expect(r.summary).toContain('| shaky | automatic rollback | production |');
    expect(r.summary).toContain('Health check: ❌');
    expect(gh.state.deployments.at(-1)!.statuses.map((x) => x.state)).toEqual(['in_progress', 'failure']);
  });

  it('a failing health check without rollback-on-failure fails the step and leaves production', async () => {
    const r = await deployCommit(
      { version: 'sick-again', healthy: false },
      { 'health-check-path': '/health.json' },
    );
    expect(r.code).toBe(1);
    expect(r.error).toMatch(/Health check of .* failed: HTTP 404\. Production serves dpl_\w+ regardless/);
    expect(r.outputs['rollback-from']).toBe('');
    expect((await api().projects.get(project.id)).productionDeploymentId).toBe(r.outputs['deployment-id']);
  });

  it('wait: false returns at once with the queued deployment', async () => {
    const r = await deployCommit({ version: 'later' }, { wait: 'false' });
    expect(r.error).toBeNull();
    expect(r.outputs.status).toBe('queued');
    expect(r.stdout).not.toContain('::group::');
    expect((await waitLive(r.outputs['deployment-id']!)).status).toBe('live');
  });

  // Last: the build it starts never ends.
  it('gives up at the timeout, saying where the deployment got to', async () => {
    const started = Date.now();
    const r = await deployCommit({ version: 'forever', hang: true }, { timeout: '3s' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.code).toBe(1);
    const id = r.outputs['deployment-id']!;
    expect(['queued', 'building']).toContain(r.outputs.status);
    expect(r.error).toMatch(
      new RegExp(`^Deployment ${id} was still (queued|building) after 3\\.0s \\(the timeout input\\)`),
    );
    expect(r.stdout).toContain('waiting for a step that never ends');
    expect(r.summary).toContain('(timed out waiting)');
    expect(gh.state.deployments.at(-1)!.statuses.map((x) => x.state)).toEqual(['in_progress', 'failure']);
  });
});
