import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOctokit, GITHUB_RETRIES, type Octokit } from '../../action/github.ts';
import { createGitHubDeployment, setGitHubDeploymentStatus } from '../../action/github-deployment.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';

const repo = { owner: 'octo-org', repo: 'site' };
const env = { name: 'production', transient: false, production: true };
const STATUSES = 'POST /repos/{owner}/{repo}/deployments/{deployment_id}/statuses';

/**
 * The action's Octokit (@actions/github with the retry and throttling plugins) against a
 * stand-in for GitHub's API on 127.0.0.1 that checks each call against GitHub's OpenAPI
 * description: one bad answer from GitHub does not lose a deployment status. Waits are made a
 * millisecond per second GitHub asks for, so the tests do not sleep.
 */
describe("the action's GitHub client", () => {
  let gh: GitHubApi;
  let logs: string[];
  let octokit: Octokit;

  beforeAll(async () => {
    gh = await createGitHubApi();
  });
  afterAll(async () => {
    await gh?.stop();
  });
  afterEach(() => {
    expect(gh.violations()).toEqual([]);
  });

  const fresh = async () => {
    logs = [];
    gh.calls.length = 0;
    octokit = await createOctokit('ghs_stand_in', gh.url, { log: (m) => logs.push(m), waitUnitMs: 1 });
    return createGitHubDeployment(octokit, repo, 'a'.repeat(40), env, 'Slipway deploy of site');
  };
  /** Answers the next `times` calls of `route` with `answer`, then lets the stand-in answer. */
  const failNext = (
    route: string,
    times: number,
    answer: { status: number; body: unknown; headers?: Record<string, string> },
  ) => {
    let left = times;
    gh.on(route, () => (left-- > 0 ? answer : undefined));
  };
  const statusCalls = () => gh.calls.filter((c) => c.operationId === 'repos/create-deployment-status');

  it('creates the status when GitHub answers 502 once, then 201', async () => {
    const id = await fresh();
    failNext(STATUSES, 1, { status: 502, body: { message: 'Server Error' } });
    await setGitHubDeploymentStatus(octokit, repo, id, { state: 'success', description: 'dpl_x is live' });
    expect(statusCalls()).toHaveLength(2);
    const d = gh.state.deployments.find((x) => x.id === id)!;
    expect(d.statuses).toEqual([expect.objectContaining({ state: 'success', description: 'dpl_x is live' })]);
  });

  it(`gives up after ${GITHUB_RETRIES} retries of a 5xx, and says what GitHub answered`, async () => {
    const id = await fresh();
    failNext(STATUSES, GITHUB_RETRIES + 1, { status: 503, body: { message: 'Service Unavailable' } });
    await expect(
      setGitHubDeploymentStatus(octokit, repo, id, { state: 'failure', description: 'broken' }),
    ).rejects.toMatchObject({ status: 503, message: expect.stringContaining('Service Unavailable') });
    expect(statusCalls()).toHaveLength(GITHUB_RETRIES + 1);
    expect(gh.state.deployments.find((x) => x.id === id)!.statuses).toEqual([]);
  });

  it('waits out a 403 secondary rate limit for its Retry-After, then retries', async () => {
    const id = await fresh();
    failNext(STATUSES, 1, {
      status: 403,
      body: {
        message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
      },
      headers: { 'retry-after': '7' },
    });
    await setGitHubDeploymentStatus(octokit, repo, id, { state: 'in_progress', description: 'building' });
    expect(statusCalls()).toHaveLength(2);
    expect(logs).toEqual([
      "GitHub's secondary rate limit holds POST /repos/{owner}/{repo}/deployments/{deployment_id}/statuses: trying again in 7 s.",
    ]);
    expect(gh.state.deployments.find((x) => x.id === id)!.statuses).toEqual([
      expect.objectContaining({ state: 'in_progress' }),
    ]);
  });

  it('does not sit out a used-up quota that resets in an hour: the call fails at once', async () => {
    const id = await fresh();
    failNext(STATUSES, 1, {
      status: 403,
      body: { message: 'API rate limit exceeded for installation ID 1.' },
      headers: {
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      },
    });
    await expect(
      setGitHubDeploymentStatus(octokit, repo, id, { state: 'success', description: 'live' }),
    ).rejects.toMatchObject({ status: 403 });
    expect(statusCalls()).toHaveLength(1);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(
      /^GitHub's rate limit holds POST \/repos\/\{owner\}\/\{repo\}\/deployments\/\{deployment_id\}\/statuses for 360\d s: not waiting/,
    );
  });
});
