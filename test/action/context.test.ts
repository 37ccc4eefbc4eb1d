import { describe, expect, it } from 'vitest';
import { contextFrom, RunnerEnv } from '../../action/context.ts';
import { deploymentBody } from '../../action/deploy-request.ts';
import { formatDuration, parseDuration } from '../../action/duration.ts';
import { environmentFor } from '../../action/github-deployment.ts';
import { idempotencyKey } from '../../action/idempotency.ts';
import { readInputs } from '../../action/inputs.ts';
import { pullRequestEvent, pushEvent } from './run-action.ts';

const SHA = 'abcdef0123456789abcdef0123456789abcdef01';
const base = { GITHUB_REPOSITORY: 'octo-org/site', GITHUB_RUN_ID: '77', GITHUB_JOB: 'deploy' };
const ctxOf = (env: Record<string, string>, payload: unknown) =>
  contextFrom(RunnerEnv.parse({ ...base, ...env }), payload);
const inputs = (extra: Record<string, string> = {}) => {
  const values: Record<string, string> = {
    'api-url': 'http://127.0.0.1:1',
    'api-token': 't',
    project: 'site',
    ...extra,
  };
  return readInputs((name) => values[name] ?? '');
};

describe('the run context from real event payloads', () => {
  it('push: the pushed branch, GITHUB_SHA and the head commit message; the service picks the target', () => {
    const ev = pushEvent({ sha: SHA, branch: 'main', message: 'Fix the footer' });
    const ctx = ctxOf({ ...ev.env, GITHUB_EVENT_NAME: 'push' }, ev.event.payload);
    expect(ctx).toMatchObject({ branch: 'main', commit: SHA, message: 'Fix the footer', pullRequest: null });
    expect(ctx.logUrl).toBe('https://github.com/octo-org/site/actions/runs/77');
    expect(deploymentBody(inputs(), ctx)).toEqual({
      branch: 'main',
      commitHash: SHA,
      message: 'Fix the footer',
    });
  });

  it('pull_request: the head branch and commit, never the merge commit, as a preview', () => {
    const ev = pullRequestEvent({ number: 5, headRef: 'feature', headSha: SHA });
    const ctx = ctxOf({ ...ev.env, GITHUB_EVENT_NAME: 'pull_request' }, ev.event.payload);
    expect(ctx.pullRequest).toMatchObject({ number: 5, headRef: 'feature', headSha: SHA, fromFork: false });
    expect(deploymentBody(inputs(), ctx)).toEqual({ branch: 'feature', commitHash: SHA, target: 'preview' });
    expect(deploymentBody(inputs({ target: 'production', message: 'm' }), ctx)).toEqual({
      branch: 'feature',
      commitHash: SHA,
      message: 'm',
      target: 'production',
    });
  });

  it("pull_request from a fork: GitHub's pull ref, which the base repository has", () => {
    const ev = pullRequestEvent({ number: 9, headRef: 'patch-1', headSha: SHA });
    (ev.event.payload.pull_request as { head: { repo: { full_name: string } } }).head.repo.full_name =
      'someone/site';
    const ctx = ctxOf({ ...ev.env, GITHUB_EVENT_NAME: 'pull_request_target' }, ev.event.payload);
    expect(ctx.pullRequest?.fromFork).toBe(true);
    expect(ctx.branch).toBe('refs/pull/9/head');
  });

  it('workflow_dispatch and tags: the ref as it is; an input branch drops the event commit', () => {
    const dispatch = ctxOf(
      { GITHUB_EVENT_NAME: 'workflow_dispatch', GITHUB_REF: 'refs/heads/release', GITHUB_SHA: SHA },
      {},
    );
    expect(dispatch).toMatchObject({ branch: 'release', commit: SHA, message: undefined });
    expect(deploymentBody(inputs({ branch: 'staging' }), dispatch)).toEqual({ branch: 'staging' });
    const tag = ctxOf({ GITHUB_EVENT_NAME: 'push', GITHUB_REF: 'refs/tags/v1.2.0', GITHUB_SHA: SHA }, {});
    expect(tag.branch).toBe('refs/tags/v1.2.0');
  });

  it('GitHub environments: production, one per pull request, else one per branch', () => {
    expect(environmentFor('production', 3, 'x')).toEqual({
      name: 'production',
      transient: false,
      production: true,
    });
    expect(environmentFor('preview', 3, 'x')).toEqual({
      name: 'preview/pr-3',
      transient: true,
      production: false,
    });
    expect(environmentFor('preview', null, 'feature/a')).toMatchObject({ name: 'preview/feature/a' });
  });
});

describe('idempotency keys', () => {
  const run = { runId: '77', attempt: '1', job: 'deploy' };
  it('are the same for a retry in one attempt and differ across attempts, jobs and requests', () => {
    const key = idempotencyKey(run, 'deploy', 'site', 'abc');
    expect(key).toBe('slipway-action:77:1:deploy:deploy:site:abc');
    expect(idempotencyKey(run, 'deploy', 'site', 'abc')).toBe(key);
    expect(idempotencyKey({ ...run, attempt: '2' }, 'deploy', 'site', 'abc')).not.toBe(key);
    expect(idempotencyKey({ ...run, job: 'other' }, 'deploy', 'site', 'abc')).not.toBe(key);
    expect(idempotencyKey(run, 'deploy', 'site', 'abd')).not.toBe(key);
    expect(idempotencyKey(run, 'rollback', 'site')).toBe('slipway-action:77:1:deploy:rollback:site');
  });
  it('stay within the 255 printable characters the service accepts', () => {
    const key = idempotencyKey({ ...run, job: `j${'x'.repeat(300)} é` }, 'deploy', 'site')!;
    expect(key).toMatch(/^[\x21-\x7e]{1,255}$/);
    expect(idempotencyKey(null, 'deploy', 'site')).toBeUndefined();
  });
});

describe('durations', () => {
  it.each([
    ['15m', 900_000],
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['600', 600_000],
    ['2H', 7_200_000],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', 'soon', '15 minutes', '0s', '25h', '1.5m', '-5s'])('"%s" is not a timeout', (text) =>
    expect(parseDuration(text)).toBeNull(),
  );
  it('reads back for people', () => {
    expect([formatDuration(850), formatDuration(4200), formatDuration(3_723_000)]).toEqual([
      '850 ms',
      '4.2s',
      '1h 2m 3s',
    ]);
  });
});
