import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Project } from '../../api/schemas/projects.ts';
import { createToken } from '../../server/features/identity/users/create-token.ts';
import type { GitRepo } from '../helpers/git-repo.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { ensureBundle } from './bundle.ts';
import { pullRequestEvent, pushEvent, runAction, type RunOptions } from './run-action.ts';
import { createSiteRepo, siteFiles } from './site.ts';

/**
 * The bundled action, run as the runner runs it, against the whole service on 127.0.0.1 building
 * a real git repository, and a stand-in for GitHub's API that checks every call against GitHub's
 * OpenAPI description. The tests follow one project through its life: deploy on push, preview a
 * pull request, promote it on merge, roll back.
 */
describe('the action: deploy, preview, promote, roll back', () => {
  let s: Stack;
  let gh: GitHubApi;
  let repo: GitRepo;
  let token: string;
  let userId: string;
  let project: Project;
  const run = { firstProduction: '', preview: '', prBranchSha: '' };

  beforeAll(async () => {
    [, s, gh] = await Promise.all([ensureBundle(), startStack(), createGitHubApi()]);
    ({ token, userId } = await s.user('action@example.com'));
    repo = createSiteRepo();
    const me = await s.client(token).user.get();
    project = await s.client(token).projects.create({
      name: 'site',
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
  const action = (inputs: Record<string, string>, event: Pick<RunOptions, 'event' | 'env'>, env = {}) =>
    runAction({
      inputs: {
        'api-url': s.apiUrl,
        'api-token': token,
        project: 'site',
        'github-token': 'ghs_stand_in',
        ...inputs,
      },
      event: event.event,
      env: { GITHUB_API_URL: gh.url, ...event.env, ...env },
    });
  /** Requests a user made: the rate limiter counts them (on SQLite, written behind: written here first). */
  const requestsOf = async (user: string) => {
    await s.running.deps.rateCounts.flush();
    const rows = await s.running.deps.db
      .selectFrom('rate_limits')
      .select('count')
      .where('user_id', '=', user)
      .execute();
    return rows.reduce((n, r) => n + Number(r.count), 0);
  };

  it('deploys a push to the default branch to production, streaming the log, within a few requests', async () => {
    const sha = repo.git('rev-parse', 'HEAD');
    const own = await createToken(s.running.deps, userId, 'workflow');
    const before = await requestsOf(userId);
    const r = await action(
      { 'api-token': own.token, 'github-deployment': 'true', 'health-check-path': '/health.json' },
      pushEvent({ sha, branch: 'main', message: 'Initial commit' }),
      { GITHUB_RUN_ID: '1001' },
    );
    expect(r.error).toBeNull();
    expect(r.code).toBe(0);
    // One project read, one create, one log stream, one final read, one production URL read.
    const requests = (await requestsOf(userId)) - before;

    const d = await api().deployments.get(r.outputs['deployment-id']!);
    const p = await api().projects.get(project.id);
    expect(d).toMatchObject({
      status: 'live',
      target: 'production',
      commitHash: sha,
      message: 'Initial commit',
    });
    expect(r.outputs).toEqual({
      'deployment-id': d.id,
      url: d.url,
      // A production deployment has no branch URL: the production URL is its.
      'branch-url': '',
      status: 'live',
      target: 'production',
      'project-id': project.id,
      'production-url': p.deploymentUrl,
      'rollback-from': '',
    });
    expect(await (await s.fetchFromEdge(p.deploymentUrl!)).text()).toBe('<h1>v1</h1>');
    run.firstProduction = d.id;

    // The build log went into a collapsible group, line by line, as it was written.
    const group = r.stdout.slice(r.stdout.indexOf('::group::'), r.stdout.indexOf('::endgroup::'));
    expect(group).toContain(`::group::Build log of ${d.id} (commit ${sha.slice(0, 7)})`);
    expect(group).toContain('building version v1');
    expect(group).toContain('built version v1');
    expect(r.stdout).toContain(`Health check passed: HTTP 200`);
    // The token is masked, and printed nowhere else.
    expect(r.stdout.split(own.token).length - 1).toBe(1);
    expect(r.stdout).toContain(`::add-mask::${own.token}`);

    expect(requests).toBe(5);

    expect(r.summary).toContain('### Slipway deploy: `site`');
    expect(r.summary).toMatch(
      new RegExp(
        `\\| site \\| deploy \\| production \\| \`${sha.slice(0, 7)}\` \\| ✅ Live \\| \\[${d.url}\\]`,
      ),
    );
    expect(r.summary).toContain(`Production URL: [${p.deploymentUrl}](${p.deploymentUrl})`);
    expect(r.summary).toContain('Health check: ✅');

    expect(gh.state.deployments).toHaveLength(1);
    expect(gh.state.deployments[0]).toMatchObject({
      ref: sha,
      environment: 'production',
      production_environment: true,
      transient_environment: false,
      required_contexts: [],
    });
    expect(gh.state.deployments[0]!.statuses).toEqual([
      expect.objectContaining({
        state: 'in_progress',
        log_url: 'https://github.example/octo-org/site/actions/runs/1001',
      }),
      expect.objectContaining({
        state: 'success',
        environment_url: p.deploymentUrl,
        log_url: 'https://github.example/octo-org/site/actions/runs/1001',
      }),
    ]);
    // A push is no pull request: no comment.
    expect(gh.state.comments).toHaveLength(0);
  });

  it('previews a pull request and keeps one comment on it, updated in place by the next run', async () => {
    repo.git('checkout', '-q', '-b', 'feature');
    const first = repo.commit(siteFiles({ version: 'v2' }), 'v2');
    const r1 = await action(
      { 'github-deployment': 'true' },
      pullRequestEvent({ number: 7, headRef: 'feature', headSha: first }),
    );
    expect(r1.error).toBeNull();
    expect(r1.outputs).toMatchObject({
      status: 'live',
      target: 'preview',
      'production-url': expect.any(String),
    });
    const d1 = await api().deployments.get(r1.outputs['deployment-id']!);
    expect(d1).toMatchObject({ branch: 'feature', commitHash: first, target: 'preview' });
    expect(await (await s.fetchFromEdge(d1.url)).text()).toBe('<h1>v2</h1>');
    // The branch URL serves the preview too, and follows the next one.
    expect(d1.branchUrl).toMatch(/^http:\/\/site-git-feature\.localhost:\d+$/);
    expect(r1.outputs['branch-url']).toBe(d1.branchUrl);
    expect(await (await s.fetchFromEdge(d1.branchUrl!)).text()).toBe('<h1>v2</h1>');
    expect(r1.summary).toContain(`Branch URL: [${d1.branchUrl}](${d1.branchUrl})`);

    const marker = `<!-- slipway:action:${project.id} -->`;
    expect(gh.state.comments).toHaveLength(1);
    const comment = gh.state.comments[0]!;
    expect(comment.issue).toBe(7);
    expect(comment.body.startsWith(marker)).toBe(true);
    expect(comment.body).toContain('✅ Live');
    expect(comment.body).toContain(`[${d1.url}](${d1.url})`);
    expect(comment.body).toContain(`Branch URL: [${d1.branchUrl}](${d1.branchUrl})`);
    expect(comment.body).toContain(`\`${first.slice(0, 7)}\``);
    const preview = gh.state.deployments.find((d) => d.environment === 'preview/pr-7')!;
    expect(preview).toMatchObject({ ref: first, transient_environment: true, production_environment: false });
    expect(preview.statuses.map((x) => x.state)).toEqual(['in_progress', 'success']);
    expect(preview.statuses[1]!.environment_url).toBe(d1.url);

    const second = repo.commit(siteFiles({ version: 'v3' }), 'v3');
    const r2 = await action(
      {},
      pullRequestEvent({ number: 7, headRef: 'feature', headSha: second, action: 'synchronize' }),
    );
    expect(r2.error).toBeNull();
    const d2 = r2.outputs['deployment-id']!;
    expect(d2).not.toBe(d1.id);
    expect(r2.outputs['branch-url']).toBe(d1.branchUrl);
    expect(await (await s.fetchFromEdge(d1.branchUrl!)).text()).toBe('<h1>v3</h1>');
    expect(gh.state.comments).toHaveLength(1);
    expect(gh.state.comments[0]!.id).toBe(comment.id);
    expect(gh.state.comments[0]!.body).toContain(d2);
    expect(gh.state.comments[0]!.body).not.toContain(d1.id);
    expect(
      gh.calls.filter((c) => c.method === 'PATCH' && c.path.includes('/issues/comments/')).length,
    ).toBeGreaterThan(0);
    run.preview = d2;
    run.prBranchSha = second;
  });

  it('re-run within one attempt does not deploy twice; a new attempt deploys again', async () => {
    const event = pullRequestEvent({
      number: 7,
      headRef: 'feature',
      headSha: run.prBranchSha,
      action: 'synchronize',
    });
    const ids = { GITHUB_RUN_ID: '2002', GITHUB_RUN_ATTEMPT: '1' };
    const first = await action({ comment: 'false' }, event, ids);
    const again = await action({ comment: 'false' }, event, ids);
    expect(first.error).toBeNull();
    expect(again.error).toBeNull();
    expect(again.outputs['deployment-id']).toBe(first.outputs['deployment-id']);
    expect(again.stdout).toContain(
      `::notice::An earlier try of this step in this run attempt already started ${first.outputs['deployment-id']}`,
    );
    const ofCommit = await api().deployments.list(project.id, { commitHash: run.prBranchSha });
    expect(ofCommit.data.filter((d) => d.id === first.outputs['deployment-id'])).toHaveLength(1);

    const next = await action({ comment: 'false' }, event, { ...ids, GITHUB_RUN_ATTEMPT: '2' });
    expect(next.error).toBeNull();
    expect(next.outputs['deployment-id']).not.toBe(first.outputs['deployment-id']);
    run.preview = next.outputs['deployment-id']!;
  });

  it('promotes the live preview of the merged head to production, once', async () => {
    const event = pullRequestEvent({
      number: 7,
      headRef: 'feature',
      headSha: run.prBranchSha,
      action: 'closed',
    });
    const r = await action({ command: 'promote', 'health-check-path': '/health.json' }, event);
    expect(r.error).toBeNull();
    expect(r.outputs).toMatchObject({ 'deployment-id': run.preview, status: 'live', target: 'production' });
    const promoted = await api().deployments.get(run.preview);
    expect(promoted.promotedAt).not.toBeNull();
    expect(await (await s.fetchFromEdge(r.outputs['production-url']!)).text()).toBe('<h1>v3</h1>');
    expect(gh.state.comments[0]!.body).toContain('Slipway promotion to production');

    const again = await action({ command: 'promote' }, event);
    expect(again.error).toBeNull();
    expect(again.stdout).toContain('already is the production deployment');
    expect(again.outputs['deployment-id']).toBe(run.preview);
  });

  it('rolls production back from a workflow_dispatch', async () => {
    const r = await action(
      { command: 'rollback', 'github-deployment': 'true' },
      {
        event: { name: 'workflow_dispatch', payload: {} },
        env: { GITHUB_REF: 'refs/heads/main', GITHUB_SHA: repo.git('rev-parse', 'main') },
      },
    );
    expect(r.error).toBeNull();
    expect(r.outputs).toMatchObject({ status: 'live', target: 'production', 'rollback-from': run.preview });
    const back = await api().deployments.get(r.outputs['deployment-id']!);
    expect(back.rollbackFrom).toBe(run.preview);
    expect(back.commitHash).toBe(repo.git('rev-parse', 'main'));
    expect(await (await s.fetchFromEdge(r.outputs['production-url']!)).text()).toBe('<h1>v1</h1>');
    expect((await api().projects.get(project.id)).productionDeploymentId).toBe(back.id);
    const ghd = gh.state.deployments.at(-1)!;
    expect(ghd).toMatchObject({ environment: 'production', ref: back.commitHash });
    expect(ghd.statuses.map((x) => x.state)).toEqual(['in_progress', 'success']);
    expect(r.summary).toContain('| site | rollback | production |');
  });

  it('a retried rollback in the same attempt replays the first instead of undoing it', async () => {
    const dispatch = {
      event: { name: 'workflow_dispatch', payload: {} },
      env: { GITHUB_REF: 'refs/heads/main' },
    };
    const ids = { GITHUB_RUN_ID: '3003' };
    const before = (await api().projects.get(project.id)).productionDeploymentId!;
    const first = await action({ command: 'rollback' }, dispatch, ids);
    const again = await action({ command: 'rollback' }, dispatch, ids);
    expect(first.error).toBeNull();
    expect(again.error).toBeNull();
    expect(first.outputs['rollback-from']).toBe(before);
    expect(again.outputs['deployment-id']).toBe(first.outputs['deployment-id']);
    expect(again.outputs['rollback-from']).toBe(before);
    expect((await api().projects.get(project.id)).productionDeploymentId).toBe(
      first.outputs['deployment-id'],
    );
  });

  it('rolls back to an earlier production deployment named by `to`', async () => {
    const dispatch = {
      event: { name: 'workflow_dispatch', payload: {} },
      env: { GITHUB_REF: 'refs/heads/main' },
    };
    const current = (await api().projects.get(project.id)).productionDeploymentId!;
    const r = await action({ command: 'rollback', to: run.preview }, dispatch, { GITHUB_RUN_ID: '3004' });
    expect(r.error).toBeNull();
    const back = await api().deployments.get(r.outputs['deployment-id']!);
    expect(back).toMatchObject({ status: 'live', rollbackFrom: current, rollbackTo: run.preview });
    expect(await (await s.fetchFromEdge(r.outputs['production-url']!)).text()).toBe('<h1>v3</h1>');

    const wrong = await action({ command: 'deploy', to: run.preview }, dispatch);
    expect(wrong.error).toBe('Input "to" is for the rollback command (the deployment to go back to)');
  });
});
