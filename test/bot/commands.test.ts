import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeState } from '../../bot/render/comment-state.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { checkRunEvent, issueCommentEvent, type PrSpec, pullRequest } from './helpers/payloads.ts';

describe('commands and check buttons', () => {
  let h: Harness;
  let productionBefore: string;
  beforeAll(async () => {
    h = await startHarness();
    h.github.permissions.set('maintainer', 'admin');
    h.github.permissions.set('writer', 'write');
    h.github.permissions.set('reader', 'read');
    // An earlier production deployment, for /rollback to go back to.
    const first = await h.client.deployments.create(h.project.id);
    productionBefore = first.id;
    await waitFor(
      'production',
      async () => (await h.client.deployments.get(first.id)).status === 'live',
      20_000,
    );
  });
  afterAll(async () => {
    expect(h?.github.violations()).toEqual([]);
    await h?.stop();
  });

  const say = (number: number, body: string, login: string, onPull = true) =>
    h.receive('issue_comment', issueCommentEvent({ number, body, login, onPull }));

  async function livePull(number: number): Promise<{ spec: PrSpec; run: any }> {
    const spec = {
      number,
      headSha: h.push(`feature-${number}`, { 'message.txt': `pr ${number}` }),
      headRef: `feature-${number}`,
    };
    await h.open(spec);
    const run = await h.waitForCheck(spec.headSha, 'Slipway Preview', (r) => r.conclusion === 'success');
    return { spec, run };
  }

  it('/slipway help answers anyone, even without .github/slipway.yml', async () => {
    h.github.config = null;
    try {
      await say(40, '/slipway help', 'reader', false);
      const [help] = h.github.replies(40);
      expect(help).toMatchInlineSnapshot(`
        "**Slipway commands** (people with write access to the repository):

        | Command | What it does |
        | :-- | :-- |
        | \`/preview\` | Builds a preview of the head commit now, whatever the draft, label, path and \`[skip ...]\` rules say; approves a fork's commit. |
        | \`/promote\` | Makes the live preview of the head commit production, without a rebuild. |
        | \`/rollback\` | Rolls production back to the deployment that was live before the current one; \`/rollback dpl_...\` to that earlier production deployment. |
        | \`/slipway help\` | Shows this list (anyone). |

        The **Slipway Preview** check also has buttons: **Redeploy**, **Promote**, and **Approve preview** for forks.
        Settings live in \`.github/slipway.yml\` on the default branch."
      `);
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('ignores bots, comments that only mention a command, and commands on issues', async () => {
    const before = h.github.calls.length;
    await h.receive(
      'issue_comment',
      issueCommentEvent({ number: 41, body: '/promote', login: 'ci-bot', bot: true }),
    );
    await say(41, 'Should we /promote this?\n/promote', 'maintainer');
    await say(41, '/promote', 'maintainer', false);
    const about41 = h.github.calls.slice(before).filter((c) => c.path.includes('/41'));
    expect(about41).toEqual([]);
    expect(h.github.replies(41)).toEqual([]);
  });

  it('/promote: refused without write access, else the live preview of the head becomes production', async () => {
    const { spec, run } = await livePull(42);
    await say(42, '/promote', 'reader');
    expect(h.github.replies(42)).toEqual([
      '@reader only people with write access to `Codertocat/Hello-World` can use `/promote`. Ask a maintainer.',
    ]);
    expect((await h.client.projects.get(h.project.id)).productionDeploymentId).toBe(productionBefore);

    await say(42, '/promote', 'writer');
    const project = await h.client.projects.get(h.project.id);
    expect(project.productionDeploymentId).toBe(run.external_id);
    expect(h.github.replies(42)[1]).toBe(
      `🚀 Promoted preview \`${run.external_id}\` (\`${spec.headSha.slice(0, 7)}\`) to production: ${project.deploymentUrl}`,
    );
    expect(h.github.checks(spec.headSha, 'Slipway Production')[0]).toMatchObject({
      conclusion: 'success',
      external_id: run.external_id,
    });
    expect(decodeState(h.github.sticky(42)!)?.production).toMatchObject({
      how: 'promoted',
      by: '@writer',
      deploymentId: run.external_id,
    });
    expect(await (await h.stack.fetchFromEdge(project.deploymentUrl!)).text()).toBe('<h1>pr 42</h1>');
  });

  it('/rollback: refused without write access, else production goes back to the previous deployment', async () => {
    const from = (await h.client.projects.get(h.project.id)).productionDeploymentId!;
    await say(42, '/rollback', 'reader');
    expect(h.github.replies(42).at(-1)).toBe(
      '@reader only people with write access to `Codertocat/Hello-World` can use `/rollback`. Ask a maintainer.',
    );
    expect((await h.client.projects.get(h.project.id)).productionDeploymentId).toBe(from);

    await say(42, '/rollback', 'maintainer');
    const answer = h.github.replies(42).at(-1)!;
    const id = /deployment `(dpl_[^`]+)`/.exec(answer)![1]!;
    const back = await h.client.deployments.get(id);
    expect(back.rollbackFrom).toBe(from);
    expect(answer).toBe(
      `⏪ Rolling production back from \`${from}\`: deployment \`${id}\` (\`${back.commitHash!.slice(0, 7)}\`) reuses the earlier build and goes live in a few seconds.`,
    );
    await waitFor(
      'the rollback',
      async () => (await h.client.projects.get(h.project.id)).productionDeploymentId === id,
      20_000,
    );
    expect(decodeState(h.github.sticky(42)!)?.notes.at(-1)).toContain('@maintainer rolled production back');
  });

  it('/rollback dpl_... goes back to that earlier production deployment; a malformed id is refused', async () => {
    const current = await h.client.deployments.get(
      (await h.client.projects.get(h.project.id)).productionDeploymentId!,
    );
    // The deployment the last rollback left: production again, by id.
    const target = current.rollbackFrom!;
    await say(42, '/rollback nonsense', 'maintainer');
    expect(h.github.replies(42).at(-1)).toBe(
      '`/rollback` failed: `nonsense` is not a deployment id: write `/rollback` or `/rollback dpl_...`.',
    );
    await say(42, `/rollback ${target}`, 'maintainer');
    const id = /deployment `(dpl_[^`]+)`/.exec(h.github.replies(42).at(-1)!)![1]!;
    expect(await h.client.deployments.get(id)).toMatchObject({
      rollbackFrom: current.id,
      rollbackTo: target,
    });
    await waitFor(
      'the rollback to the named deployment',
      async () => (await h.client.projects.get(h.project.id)).productionDeploymentId === id,
      20_000,
    );
  });

  it('/promote without a live preview says so', async () => {
    const gate = h.gate();
    const spec = {
      number: 43,
      headSha: h.push('feature-43', { 'message.txt': 'x', 'gate.txt': gate.path }),
      headRef: 'feature-43',
    };
    await h.open(spec);
    await say(43, '/promote', 'writer');
    expect(h.github.replies(43)).toEqual([
      `There is no live preview of \`${spec.headSha.slice(0, 7)}\` to promote yet. Wait for the **Slipway Preview** check to pass, or comment \`/preview\`.`,
    ]);
    gate.release();
  });

  it('/preview builds the head again, even when the rules skipped it', async () => {
    const spec = {
      number: 44,
      headSha: h.push('feature-44', { 'message.txt': 'x' }),
      headRef: 'feature-44',
      labels: ['wip'],
    };
    h.github.config = 'project: hello-world\npreviews:\n  skipLabels: [wip]\n';
    try {
      await h.open(spec);
      expect(h.github.checks(spec.headSha, 'Slipway Preview')[0]).toMatchObject({ conclusion: 'skipped' });
      await say(44, '/preview', 'reader');
      expect(h.github.checks(spec.headSha, 'Slipway Preview')).toHaveLength(1);
      await say(44, '/preview', 'writer');
      const run = await h.waitForCheck(spec.headSha, 'Slipway Preview', (r) => r.conclusion === 'success');
      expect(run.external_id).toMatch(/^dpl_/);
      expect(h.github.replies(44)).toEqual([
        '@reader only people with write access to `Codertocat/Hello-World` can use `/preview`. Ask a maintainer.',
      ]);
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('the check buttons: Redeploy and Promote need write access', async () => {
    const { spec, run } = await livePull(45);
    const click = (identifier: string, login: string) =>
      h.receive(
        'check_run',
        checkRunEvent({
          action: 'requested_action',
          run: { id: run.id, head_sha: spec.headSha, external_id: run.external_id, name: 'Slipway Preview' },
          identifier,
          login,
        }),
      );
    await click('redeploy', 'reader');
    await click('promote', 'reader');
    expect(h.github.replies(45)).toEqual([
      '@reader only people with write access to `Codertocat/Hello-World` can use the Slipway buttons. Ask a maintainer.',
      '@reader only people with write access to `Codertocat/Hello-World` can use the Slipway buttons. Ask a maintainer.',
    ]);
    expect(h.github.checks(spec.headSha, 'Slipway Preview')).toHaveLength(1);

    await click('redeploy', 'writer');
    const runs = h.github.checks(spec.headSha, 'Slipway Preview');
    expect(runs).toHaveLength(2);
    expect(runs[1]!.external_id).not.toBe(run.external_id);
    await h.waitForCheck(
      spec.headSha,
      'Slipway Preview',
      (r) => r.id === runs[1]!.id && r.conclusion === 'success',
    );

    await click('promote', 'writer');
    expect((await h.client.projects.get(h.project.id)).productionDeploymentId).toBe(run.external_id);
    expect(h.github.replies(45).at(-1)).toMatch(/^🚀 Promoted preview `dpl_/);
  });

  it("GitHub's Re-run decides again: a removed skip label now builds", async () => {
    h.github.config = 'project: hello-world\npreviews:\n  skipLabels: [wip]\n';
    try {
      const spec = {
        number: 46,
        headSha: h.push('feature-46', { 'message.txt': 'x' }),
        headRef: 'feature-46',
        labels: ['wip'],
      };
      await h.open(spec);
      const [skipped] = h.github.checks(spec.headSha, 'Slipway Preview');
      h.github.pulls.set(46, pullRequest({ ...spec, labels: [] }));
      await h.receive(
        'check_run',
        checkRunEvent({
          action: 'rerequested',
          run: { id: skipped!.id, head_sha: spec.headSha, external_id: 'pr-46', name: 'Slipway Preview' },
          login: 'writer',
        }),
      );
      await h.waitForCheck(
        spec.headSha,
        'Slipway Preview',
        (r) => r.id !== skipped!.id && r.conclusion === 'success',
      );
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });
});
