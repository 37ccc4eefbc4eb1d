import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeState } from '../../bot/render/comment-state.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { checkRunEvent, issueCommentEvent, pullRequest, pullRequestEvent } from './helpers/payloads.ts';

describe('pull requests from forks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.github.permissions.set('maintainer', 'write');
    h.github.permissions.set('visitor', 'read');
    // Fork previews must never see production's values.
    await h.client.env.create(h.project.id, {
      key: 'SHOW_ENV',
      value: 'production-secret',
      environment: 'production',
    });
    await h.client.env.create(h.project.id, {
      key: 'SHOW_ENV',
      value: 'preview-only',
      environment: 'preview',
    });
  });
  afterAll(async () => {
    expect(h?.github.violations()).toEqual([]);
    await h?.stop();
  });

  const deploymentsOf = async (sha: string) =>
    (await h.client.deployments.list(h.project.id, { commitHash: sha })).data;

  it('waits for approval; only someone with write access can approve, and then it builds with preview variables', async () => {
    const sha = h.pushFork(20, { 'message.txt': 'fork twenty' });
    await h.open({ number: 20, headSha: sha, headRef: 'patch-1', fork: true });
    const [waiting] = h.github.checks(sha, 'Slipway Preview');
    expect(waiting).toMatchObject({
      status: 'completed',
      conclusion: 'action_required',
      external_id: 'pr-20',
      details_url: 'https://github.com/Codertocat/Hello-World/pull/20',
      actions: [
        {
          label: 'Approve preview',
          identifier: 'approve',
          description: 'Build a preview of this fork commit',
        },
      ],
    });
    expect((waiting!.output as any).title).toBe('Waiting for approval');
    expect(decodeState(h.github.sticky(20)!)?.preview).toMatchObject({ status: 'awaiting-approval', sha });
    expect(await deploymentsOf(sha)).toEqual([]);

    const click = (login: string) =>
      h.receive(
        'check_run',
        checkRunEvent({
          action: 'requested_action',
          run: { id: waiting!.id, head_sha: sha, external_id: 'pr-20', name: 'Slipway Preview' },
          identifier: 'approve',
          login,
        }),
      );
    await click('visitor');
    expect(h.github.replies(20)).toEqual([
      '@visitor only people with write access to `Codertocat/Hello-World` can use the Slipway buttons. Ask a maintainer.',
    ]);
    expect(await deploymentsOf(sha)).toEqual([]);

    await click('maintainer');
    const [d] = await deploymentsOf(sha);
    expect(d).toMatchObject({ branch: 'refs/pull/20/head', commitHash: sha, target: 'preview' });
    expect(waiting).toMatchObject({ conclusion: 'neutral' });
    const live = await h.waitForCheck(
      sha,
      'Slipway Preview',
      (r) => r.external_id === d!.id && r.conclusion === 'success',
    );
    expect(live.details_url).toBe(d!.dashboardUrl);
    expect(await (await h.stack.fetchFromEdge(d!.url)).text()).toBe('<h1>fork twenty preview-only</h1>');
  });

  it('a new fork commit needs a new approval; an old approval builds nothing; /preview approves', async () => {
    const first = h.pushFork(21, { 'message.txt': 'fork 21 v1' });
    await h.open({ number: 21, headSha: first, headRef: 'patch-2', fork: true });
    const [oldCheck] = h.github.checks(first, 'Slipway Preview');
    const second = h.pushFork(21, { 'message.txt': 'fork 21 v2' });
    const spec = { number: 21, headSha: second, headRef: 'patch-2', fork: true };
    h.github.pulls.set(21, pullRequest(spec));
    await h.receive('pull_request', pullRequestEvent('synchronize', spec, { before: first }));
    expect(oldCheck).toMatchObject({ conclusion: 'neutral' });
    expect(h.github.checks(second, 'Slipway Preview')[0]).toMatchObject({ conclusion: 'action_required' });

    await h.receive(
      'check_run',
      checkRunEvent({
        action: 'requested_action',
        run: { id: oldCheck!.id, head_sha: first, external_id: 'pr-21', name: 'Slipway Preview' },
        identifier: 'approve',
        login: 'maintainer',
      }),
    );
    expect(h.github.replies(21)).toEqual([
      `@maintainer this pull request has new commits since \`${first.slice(0, 7)}\`: approve the newest **Slipway Preview** check, or comment \`/preview\`.`,
    ]);
    expect(await deploymentsOf(first)).toEqual([]);
    expect(await deploymentsOf(second)).toEqual([]);

    await h.receive('issue_comment', issueCommentEvent({ number: 21, body: '/preview', login: 'visitor' }));
    expect(h.github.replies(21).at(-1)).toBe(
      '@visitor only people with write access to `Codertocat/Hello-World` can use `/preview`. Ask a maintainer.',
    );
    expect(await deploymentsOf(second)).toEqual([]);

    await h.receive(
      'issue_comment',
      issueCommentEvent({ number: 21, body: '/preview', login: 'maintainer' }),
    );
    const [d] = await deploymentsOf(second);
    expect(d).toMatchObject({ branch: 'refs/pull/21/head', target: 'preview' });
    await h.waitForCheck(
      second,
      'Slipway Preview',
      (r) => r.external_id === d!.id && r.conclusion === 'success',
    );
    expect(h.github.replies(21)).toHaveLength(2);
  });

  it('with forks: never nothing is built, even on /preview', async () => {
    h.github.config = 'project: hello-world\npreviews:\n  forks: never\n';
    try {
      const sha = h.pushFork(22, { 'message.txt': 'fork 22' });
      await h.open({ number: 22, headSha: sha, headRef: 'patch-3', fork: true });
      expect(h.github.checks(sha, 'Slipway Preview')[0]).toMatchObject({
        conclusion: 'skipped',
        output: {
          title: 'Preview skipped',
          summary: 'Previews of pull requests from forks are turned off (`previews.forks: never`).',
        },
      });
      await h.receive(
        'issue_comment',
        issueCommentEvent({ number: 22, body: '/preview', login: 'maintainer' }),
      );
      expect(h.github.replies(22)).toEqual([
        'No preview: Previews of pull requests from forks are turned off (`previews.forks: never`).',
      ]);
      expect(await deploymentsOf(sha)).toEqual([]);
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });
});
