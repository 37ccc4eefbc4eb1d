import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeState } from '../../bot/render/comment-state.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { type Harness, normalise, startHarness } from './helpers/harness.ts';
import { type PrSpec, pullRequest, pullRequestEvent } from './helpers/payloads.ts';

describe('merging and closing pull requests', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    expect(h?.github.violations()).toEqual([]);
    await h?.stop();
  });

  /** Merges the branch into main in the real repository, as GitHub would, and sends `closed`. */
  async function merge(spec: PrSpec) {
    h.repo.git('merge', '-q', '--no-ff', '-m', `Merge pull request #${spec.number}`, spec.headRef);
    const mergeSha = h.repo.git('rev-parse', 'HEAD');
    const merged = { ...spec, state: 'closed' as const, merged: true, mergeSha };
    h.github.pulls.set(spec.number, pullRequest(merged));
    await h.receive('pull_request', pullRequestEvent('closed', merged));
    return mergeSha;
  }

  async function liveOpen(number: number, message: string): Promise<{ spec: PrSpec; previewId: string }> {
    const spec = {
      number,
      headSha: h.push(`feature-${number}`, { 'message.txt': message }),
      headRef: `feature-${number}`,
    };
    await h.open(spec);
    const run = await h.waitForCheck(spec.headSha, 'Slipway Preview', (r) => r.conclusion === 'success');
    return { spec, previewId: run.external_id };
  }

  it('merging promotes the live preview of the merged head commit, without a rebuild', async () => {
    const { spec, previewId } = await liveOpen(30, 'thirty');
    const deploymentsBefore = (await h.client.deployments.list(h.project.id)).meta.total;
    const mergeSha = await merge(spec);

    const [prod] = h.github.checks(mergeSha, 'Slipway Production');
    expect(prod).toMatchObject({ status: 'completed', conclusion: 'success', external_id: previewId });
    const project = await h.client.projects.get(h.project.id);
    expect(project.productionDeploymentId).toBe(previewId);
    expect(prod!.details_url).toBe((await h.client.deployments.get(previewId)).dashboardUrl);
    expect((await h.client.deployments.list(h.project.id)).meta.total).toBe(deploymentsBefore);
    expect(await (await h.stack.fetchFromEdge(project.deploymentUrl!)).text()).toBe('<h1>thirty</h1>');
    // Merged or not, a closed pull request's preview environment is inactive on GitHub.
    expect(h.github.deployments(30).map((d) => d.statuses.at(-1)?.state)).toEqual(['inactive']);

    const names = {
      [previewId]: '<dpl>',
      [spec.headSha]: '<sha>',
      [project.deploymentUrl!]: '<production-url>',
    };
    expect(normalise(`${(prod!.output as any).title}\n\n${(prod!.output as any).summary}`, names))
      .toMatchInlineSnapshot(`
      "Promoted to production

      Preview \`<dpl>\` of \`<sha7>\` is now production, without a rebuild: <production-url>

      It keeps the environment variables it was built with (the preview ones)."
    `);
    const comment = normalise(h.github.sticky(30)!, names);
    expect(comment.split('\n').find((l) => l.startsWith('🚀'))).toMatchInlineSnapshot(
      `"🚀 **Production:** the merge promoted preview \`<dpl>\` (\`<sha7>\`) to production: <production-url>"`,
    );
  });

  it('without a live preview of the merged commit, a production deployment of the base branch starts', async () => {
    const spec = {
      number: 31,
      headSha: h.push('feature-31', { 'message.txt': 'thirty-one' }),
      headRef: 'feature-31',
      title: 'Quick fix [skip preview]',
    };
    await h.open(spec);
    expect(h.github.checks(spec.headSha, 'Slipway Preview')[0]).toMatchObject({ conclusion: 'skipped' });
    const mergeSha = await merge(spec);

    const [running] = h.github.checks(mergeSha, 'Slipway Production');
    expect(running).toMatchObject({ status: 'in_progress' });
    const d = await h.client.deployments.get(running!.external_id!);
    expect(d).toMatchObject({
      target: 'production',
      branch: 'main',
      message: `Merge of Codertocat/Hello-World#31 (${mergeSha})`,
    });
    const done = await h.waitForCheck(mergeSha, 'Slipway Production', (r) => r.status === 'completed');
    expect(done).toMatchObject({ conclusion: 'success', output: { title: 'Production is live' } });
    const project = await h.client.projects.get(h.project.id);
    expect(project.productionDeploymentId).toBe(d.id);
    expect(await (await h.stack.fetchFromEdge(project.deploymentUrl!)).text()).toBe('<h1>thirty-one</h1>');
    const line = await waitFor('the production line', () => {
      const state = decodeState(h.github.sticky(31) ?? '');
      return state?.production?.status === 'live' && h.github.sticky(31);
    });
    const names = { [d.id]: '<dpl>', [project.deploymentUrl!]: '<production-url>' };
    expect(
      normalise(line, names)
        .split('\n')
        .find((l) => l.startsWith('🚀')),
    ).toMatchInlineSnapshot(
      `"🚀 **Production:** after the merge there was no live preview of the merged commit, so a production deployment of \`main\` (\`<dpl>\`) is live: <production-url>"`,
    );
  });

  it('merging into another branch than the production branch promotes nothing', async () => {
    h.repo.git('branch', 'develop', 'main');
    const spec = {
      number: 32,
      headSha: h.push('feature-32', { 'message.txt': 'x' }),
      headRef: 'feature-32',
      baseRef: 'develop',
    };
    await h.open(spec);
    await h.waitForCheck(spec.headSha, 'Slipway Preview', (r) => r.conclusion === 'success');
    const production = (await h.client.projects.get(h.project.id)).productionDeploymentId;
    const merged = { ...spec, state: 'closed' as const, merged: true, mergeSha: spec.headSha };
    await h.receive('pull_request', pullRequestEvent('closed', merged));
    expect((await h.client.projects.get(h.project.id)).productionDeploymentId).toBe(production);
    expect(h.github.checks(spec.headSha, 'Slipway Production')).toEqual([]);
    expect(decodeState(h.github.sticky(32)!)?.notes).toEqual([
      'ℹ️ Merged into `develop`, which is not the production branch of hello-world (`main`): nothing was promoted.',
    ]);
  });

  it('with promoteOnMerge: false a merge changes nothing', async () => {
    h.github.config = 'project: hello-world\npromoteOnMerge: false\n';
    try {
      const { spec } = await liveOpen(33, 'thirty-three');
      const production = (await h.client.projects.get(h.project.id)).productionDeploymentId;
      const mergeSha = await merge(spec);
      expect((await h.client.projects.get(h.project.id)).productionDeploymentId).toBe(production);
      expect(h.github.checks(mergeSha, 'Slipway Production')).toEqual([]);
      expect(h.github.deployments(33).map((d) => d.statuses.at(-1)?.state)).toEqual(['inactive']);
    } finally {
      h.github.config = 'project: hello-world\n';
    }
  });

  it('closing without merging makes the preview inactive on GitHub and says so in the comment', async () => {
    const { spec } = await liveOpen(34, 'thirty-four');
    await waitFor('the success status', () =>
      h.github.deployments(34)[0]?.statuses.some((s) => s.state === 'success'),
    );
    const closed = { ...spec, state: 'closed' as const };
    await h.receive('pull_request', pullRequestEvent('closed', closed));
    expect(h.github.deployments(34).map((d) => d.statuses.at(-1)?.state)).toEqual(['inactive']);
    const state = decodeState(h.github.sticky(34)!);
    expect(state).toMatchObject({ closed: true, preview: { status: 'live' } });
    expect(
      h.github
        .sticky(34)!
        .split('\n')
        .find((l) => l.startsWith('🔒')),
    ).toMatchInlineSnapshot(
      `"🔒 This pull request was closed without merging. Its preview is inactive on GitHub; nothing was promoted."`,
    );
    expect(h.github.checks(spec.headSha, 'Slipway Preview')[0]).toMatchObject({ conclusion: 'success' });
  });

  it('closing while the preview builds ends its check neutral', async () => {
    const gate = h.gate();
    const spec = {
      number: 35,
      headSha: h.push('feature-35', { 'message.txt': 'x', 'gate.txt': gate.path }),
      headRef: 'feature-35',
    };
    await h.open(spec);
    await h.receive('pull_request', pullRequestEvent('closed', { ...spec, state: 'closed' }));
    const [run] = h.github.checks(spec.headSha, 'Slipway Preview');
    expect(run).toMatchObject({
      status: 'completed',
      conclusion: 'neutral',
      output: { title: 'Pull request closed' },
    });
    gate.release();
    await h.delivered(run!.external_id!, 'deployment.success');
    expect(run).toMatchObject({ conclusion: 'neutral' });
  });
});
