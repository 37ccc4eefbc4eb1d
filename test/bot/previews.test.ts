import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeState } from '../../bot/render/comment-state.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { type Harness, normalise, startHarness } from './helpers/harness.ts';
import { pullRequest, pullRequestEvent } from './helpers/payloads.ts';

describe('previews of pull requests', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    expect(h?.github.violations()).toEqual([]);
    await h?.stop();
  });

  it('opened: builds the head commit, then the webhooks turn the check, deployment and comment live', async () => {
    const gate = h.gate();
    const sha = h.push('feature-2', { 'message.txt': 'hello from pr 2', 'gate.txt': gate.path });
    const started = Date.now();
    await h.open({ number: 2, headSha: sha, headRef: 'feature-2' });
    const handledMs = Date.now() - started;

    const [running] = h.github.checks(sha, 'Slipway Preview');
    expect(running).toMatchObject({ status: 'in_progress', conclusion: null });
    const deploymentId = running!.external_id!;
    expect(deploymentId).toMatch(/^dpl_/);
    const created = await h.client.deployments.get(deploymentId);
    expect(created).toMatchObject({ target: 'preview', branch: 'feature-2', commitHash: sha });
    expect(created.message).toBe(`Preview of Codertocat/Hello-World#2 (${sha})`);

    const [ghDeployment] = h.github.deployments(2);
    expect(ghDeployment).toMatchObject({
      ref: sha,
      environment: 'preview/pr-2',
      transient_environment: true,
      production_environment: false,
      auto_merge: false,
      required_contexts: [],
      payload: { slipwayDeploymentId: deploymentId },
    });
    expect(ghDeployment!.statuses[0]).toMatchObject({ state: 'in_progress' });

    const hooks = await h.client.webhooks.list(h.project.id);
    expect(hooks.data.map((w) => w.url)).toEqual([`${h.botUrl}/slipway/webhooks`]);

    // The service's "building" webhook moves the check on while the build is held.
    const building = await h.waitForCheck(
      sha,
      'Slipway Preview',
      (r) => r.output?.title === 'Building the preview',
    );
    expect(building.status).toBe('in_progress');
    await waitFor(
      'the building comment',
      () => decodeState(h.github.sticky(2) ?? '')?.preview?.status === 'building',
    );
    gate.release();

    const done = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.status === 'completed');
    expect(done.conclusion).toBe('success');
    const live = await h.client.deployments.get(deploymentId);
    expect(live.status).toBe('live');
    // Details lead to the deployment's page in the dashboard, under the service's public URL.
    expect(done.details_url).toBe(live.dashboardUrl);
    expect(live.dashboardUrl).toMatch(new RegExp(`/deployments/${live.id}$`));
    expect(done.actions.map((a: any) => a.identifier)).toEqual(['redeploy', 'promote']);
    expect(await (await h.stack.fetchFromEdge(live.url)).text()).toBe('<h1>hello from pr 2</h1>');

    // The branch's URL serves this preview too, and is shown beside its own.
    expect(live.branchUrl).toBe(`http://hello-world-git-feature-2.localhost:${h.stack.edgePort}`);
    expect(await (await h.stack.fetchFromEdge(live.branchUrl!)).text()).toBe('<h1>hello from pr 2</h1>');
    const names = {
      [deploymentId]: '<dpl>',
      [sha]: '<sha>',
      [live.url]: '<url>',
      [new URL(live.url).host]: '<host>',
      [live.branchUrl!]: '<branch-url>',
      [new URL(live.branchUrl!).host]: '<branch-host>',
    };
    expect(normalise(`${done.output.title}\n\n${done.output.summary}`, names)).toMatchInlineSnapshot(`
      "Preview is live

      **Preview:** <url>

      **Branch URL:** <branch-url> (always the newest live preview of \`feature-2\`)

      | Deployment | Commit | Branch | Build | Deploy |
      | :-- | :-- | :-- | :-- | :-- |
      | \`<dpl>\` | \`<sha7>\` | \`feature-2\` | <duration> | <duration> |

      Click **Promote** to make this preview production, or **Redeploy** to build it again."
    `);

    await waitFor('the success status', () => ghDeployment!.statuses.some((s) => s.state === 'success'));
    expect(ghDeployment!.statuses.at(-1)).toMatchObject({
      state: 'success',
      environment_url: live.url,
      log_url: `https://github.com/Codertocat/Hello-World/runs/${done.id}`,
    });
    const comment = await waitFor('the live comment', () => {
      const body = h.github.sticky(2);
      return body && decodeState(body)?.preview?.status === 'live' ? body : undefined;
    });
    expect(normalise(comment, names)).toMatchInlineSnapshot(`
      "<!-- slipway-bot:preview -->
      ### Slipway preview

      | | |
      | :-- | :-- |
      | **Commit** | \`<sha7>\` |
      | **Status** | ✅ Live |
      | **Preview** | [<host>](<url>) |
      | **Branch URL** | [<branch-host>](<branch-url>) (always the newest live preview of the branch) |
      | **Logs** | [Build log](<dashboard-url>) · [Check run](<check-url>) |
      | **Updated** | <time> |

      <sub>Comment \`/slipway help\` for commands.</sub>
      <!-- slipway-bot:state <state> -->"
    `);
    expect(h.github.state.comments.filter((c) => c.issue === 2)).toHaveLength(1);
    // GitHub gives a webhook 10 seconds.
    expect(handledMs).toBeLessThan(8000);
  });

  it('a new push supersedes the older preview, whose late events change nothing', async () => {
    const gate = h.gate();
    const first = h.push('feature-4', { 'message.txt': 'four v1', 'gate.txt': gate.path });
    await h.open({ number: 4, headSha: first, headRef: 'feature-4' });
    const [old] = h.github.checks(first, 'Slipway Preview');
    expect(old!.status).toBe('in_progress');

    const second = h.push('feature-4', { 'message.txt': 'four v2', 'gate.txt': '' });
    const spec = { number: 4, headSha: second, headRef: 'feature-4' };
    h.github.pulls.set(4, pullRequest(spec));
    await h.receive('pull_request', pullRequestEvent('synchronize', spec, { before: first }));

    expect(old).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(old!.output).toEqual({
      title: `Superseded by ${second.slice(0, 7)}`,
      summary: `A newer preview (commit \`${second.slice(0, 7)}\`) replaced this one.`,
    });
    const oldDeployment = h.github
      .deployments(4)
      .find((d: any) => d.payload.slipwayDeploymentId === old!.external_id);
    expect(oldDeployment!.statuses.map((x) => x.state)).toEqual(['in_progress', 'inactive']);
    const current = await h.waitForCheck(second, 'Slipway Preview', (r) => r.conclusion === 'success');
    expect(await h.client.deployments.get(current.external_id)).toMatchObject({
      status: 'live',
      commitHash: second,
    });

    // The superseded build finishes after all: its check and the comment stay where they are.
    gate.release();
    await h.delivered(old!.external_id!, 'deployment.success');
    expect((await h.client.deployments.get(old!.external_id!)).status).toBe('live');
    expect(old).toMatchObject({ status: 'completed', conclusion: 'neutral' });
    expect(oldDeployment!.statuses.at(-1)!.state).toBe('inactive');
    const state = decodeState(h.github.sticky(4)!);
    expect(state?.preview).toMatchObject({ deploymentId: current.external_id, sha: second, status: 'live' });
  });

  it('drafts wait for ready_for_review, with a skipped check saying so', async () => {
    const sha = h.push('feature-5', { 'message.txt': 'five' });
    await h.open({ number: 5, headSha: sha, headRef: 'feature-5', draft: true });
    const [skipped] = h.github.checks(sha, 'Slipway Preview');
    expect(skipped).toMatchObject({ status: 'completed', conclusion: 'skipped', external_id: 'pr-5' });
    expect(skipped!.output).toMatchInlineSnapshot(`
      {
        "summary": "This pull request is a draft: its preview starts when it is marked ready for review (or set \`previews.drafts: true\`). Comment \`/preview\` to build one now.",
        "title": "Preview skipped",
      }
    `);
    expect((await h.client.deployments.list(h.project.id, { commitHash: sha })).meta.total).toBe(0);
    expect(h.github.sticky(5)).toBeUndefined();

    const ready = { number: 5, headSha: sha, headRef: 'feature-5' };
    h.github.pulls.set(5, pullRequest(ready));
    await h.receive('pull_request', pullRequestEvent('ready_for_review', ready));
    const built = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success');
    expect(built.external_id).toMatch(/^dpl_/);
    expect(skipped!.conclusion).toBe('skipped');
  });

  it('skips for [skip preview] in the title, a skip label, [skip ci] in the commit, and unmatched paths', async () => {
    h.github.config = [
      'project: hello-world',
      'previews:',
      '  skipLabels: [no-preview]',
      "  paths: ['src/**', package.json]",
    ].join('\n');
    try {
      const reasons: Record<number, string> = {};
      const cases: {
        number: number;
        files: Record<string, string>;
        title?: string;
        labels?: string[];
        message?: string;
      }[] = [
        { number: 10, files: { 'src/a.txt': 'a' }, title: 'Docs [skip preview]' },
        { number: 11, files: { 'src/b.txt': 'b' }, labels: ['no-preview'] },
        { number: 12, files: { 'src/c.txt': 'c' }, message: 'Tidy up [skip ci]' },
        { number: 13, files: { 'README.md': 'words' } },
      ];
      for (const c of cases) {
        const sha = h.push(`feature-${c.number}`, c.files, c.message);
        await h.open({
          number: c.number,
          headSha: sha,
          headRef: `feature-${c.number}`,
          title: c.title,
          labels: c.labels,
        });
        const runs = h.github.checks(sha, 'Slipway Preview');
        expect(runs).toHaveLength(1);
        expect(runs[0]).toMatchObject({ status: 'completed', conclusion: 'skipped' });
        reasons[c.number] = (runs[0]!.output as any).summary;
        expect((await h.client.deployments.list(h.project.id, { commitHash: sha })).meta.total).toBe(0);
      }
      expect(reasons).toMatchInlineSnapshot(`
        {
          "10": "The pull request's title contains \`[skip preview]\`.",
          "11": "The label \`no-preview\` skips previews (\`previews.skipLabels\`).",
          "12": "The head commit's message contains \`[skip ci]\`.",
          "13": "No changed file matches \`previews.paths\` (\`src/**\`, \`package.json\`).",
        }
      `);

      const sha = h.push('feature-14', { 'src/app.txt': 'code' });
      await h.open({ number: 14, headSha: sha, headRef: 'feature-14' });
      expect(h.github.checks(sha, 'Slipway Preview')[0]).toMatchObject({ status: 'in_progress' });
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('an invalid .github/slipway.yml fails the check with the validation message', async () => {
    h.github.config = 'project: hello-world\npreviews:\n  forks: sometimes\npromoteOnMerge: yes please\n';
    try {
      const sha = h.push('feature-15', { 'message.txt': 'fifteen' });
      await h.open({ number: 15, headSha: sha, headRef: 'feature-15' });
      const [run] = h.github.checks(sha, 'Slipway Preview');
      expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
      expect(run!.output).toMatchInlineSnapshot(`
        {
          "summary": ".github/slipway.yml is not valid:
        - \`previews.forks\`: Invalid option: expected one of "approve"|"never"|"always"
        - \`promoteOnMerge\`: Invalid input: expected boolean, received string

        Fix the file on the default branch; previews start again with the next push or \`/preview\`.",
          "title": "Invalid .github/slipway.yml",
        }
      `);
      expect((await h.client.deployments.list(h.project.id, { commitHash: sha })).meta.total).toBe(0);
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('without .github/slipway.yml the App does nothing', async () => {
    h.github.config = null;
    try {
      const before = h.github.calls.length;
      const sha = h.push('feature-16', { 'message.txt': 'sixteen' });
      await h.open({ number: 16, headSha: sha, headRef: 'feature-16' });
      // Earlier previews may still report in the background: look only at this pull request.
      const calls = h.github.calls.slice(before);
      expect(calls.some((c) => c.path.endsWith('/contents/.github%2Fslipway.yml'))).toBe(true);
      expect(calls.filter((c) => c.path.includes(sha) || /\/(issues|pulls)\/16\b/.test(c.path))).toEqual([]);
      expect(h.github.checks(sha)).toEqual([]);
      expect(h.github.state.comments.filter((c) => c.issue === 16)).toEqual([]);
      expect((await h.client.deployments.list(h.project.id, { commitHash: sha })).meta.total).toBe(0);
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('a project the token cannot see ends the check as a failure saying what to fix', async () => {
    h.github.config = 'project: no-such-project\n';
    try {
      const sha = h.push('feature-17', { 'message.txt': 'seventeen' });
      await h.open({ number: 17, headSha: sha, headRef: 'feature-17' });
      const [run] = h.github.checks(sha, 'Slipway Preview');
      expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
      expect((run!.output as any).title).toBe('Could not start the preview');
      expect((run!.output as any).summary).toContain('No project named "no-such-project"');
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('comment: off never comments; comment: failures comments once a preview fails', async () => {
    h.github.config = 'project: hello-world\ncomment: off\n';
    try {
      const sha = h.push('feature-18', { 'message.txt': 'x', 'fail.txt': 'nope' });
      await h.open({ number: 18, headSha: sha, headRef: 'feature-18' });
      const run = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.status === 'completed');
      await h.delivered(run.external_id, 'deployment.failed');
      expect(h.github.sticky(18)).toBeUndefined();

      h.github.config = 'project: hello-world\ncomment: failures\n';
      const good = h.push('feature-19', { 'message.txt': 'x' });
      await h.open({ number: 19, headSha: good, headRef: 'feature-19' });
      const ok = await h.waitForCheck(good, 'Slipway Preview', (r) => r.status === 'completed');
      await h.delivered(ok.external_id, 'deployment.success');
      expect(h.github.sticky(19)).toBeUndefined();

      const bad = h.push('feature-20', { 'message.txt': 'x', 'fail.txt': 'nope' });
      await h.open({ number: 20, headSha: bad, headRef: 'feature-20' });
      const failed = await h.waitForCheck(bad, 'Slipway Preview', (r) => r.status === 'completed');
      await h.delivered(failed.external_id, 'deployment.failed');
      expect(decodeState(h.github.sticky(20)!)?.preview).toMatchObject({ status: 'failed', sha: bad });
    } finally {
      h.github.config = 'project: hello-world\n';
    }
    // Three builds, each allowed the 20 s of waitForCheck: more than the suite's 30 s on a loaded machine.
  }, 90_000);
});
