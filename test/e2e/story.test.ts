import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBundle } from '../action/bundle.ts';
import { pushEvent, runAction } from '../action/run-action.ts';
import { GITHUB_SECRET, startHarness, type Harness } from '../bot/helpers/harness.ts';
import { pullRequest, pullRequestEvent, type PrSpec } from '../bot/helpers/payloads.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The whole story with nothing faked that we own: the service (API, worker, edge) on 127.0.0.1
 * building a real local git repository, the bot (Probot) on its own HTTP server receiving
 * GitHub's events and the service's signed webhooks over HTTP, the bundled Action run as the
 * runner runs it, and a local stand-in for GitHub's API that checks every call against
 * GitHub's OpenAPI description.
 */
describe('push deploys, a pull request previews, merge promotes, rollback restores', () => {
  let h: Harness;
  let token: string;
  let edgeRequests = 0;

  beforeAll(async () => {
    await ensureBundle();
    h = await startHarness();
    token = (await h.client.user.tokens.create({ name: 'github-actions' })).token;
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** GET a URL through the edge, counting it for the metrics check. */
  const page = async (url: string) => {
    edgeRequests++;
    const res = await h.stack.fetchFromEdge(url);
    return res.text();
  };
  const productionUrl = async () => (await h.client.projects.get(h.project.id)).deploymentUrl!;

  /** GitHub's delivery of an App event: signed with the App's webhook secret, over HTTP. */
  async function github(name: string, payload: unknown) {
    const body = JSON.stringify(payload);
    const res = await fetch(`${h.botUrl}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': name,
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': await sign(GITHUB_SECRET, body),
      },
      body,
    });
    expect(res.status, await res.text()).toBeLessThan(300);
  }

  const action = (command: string, extra: Record<string, string>, event: ReturnType<typeof pushEvent>) =>
    runAction({
      inputs: {
        command,
        'api-url': h.stack.apiUrl,
        'api-token': token,
        project: h.project.id,
        'github-token': 'ghs_e2e',
        comment: 'false',
        ...extra,
      },
      event: event.event,
      env: { ...event.env, GITHUB_API_URL: h.github.url },
    });

  const spec = (headSha: string, extra: Partial<PrSpec> = {}): PrSpec => ({
    number: 7,
    headSha,
    headRef: 'feature',
    ...extra,
  });

  it('tells the story', async () => {
    // 1. A push to main: the Action deploys to production.
    const main = h.repo.git('rev-parse', 'HEAD');
    const deploy = await action(
      'deploy',
      {},
      pushEvent({ sha: main, branch: 'main', message: 'First version' }),
    );
    expect(deploy.code, deploy.stdout + deploy.stderr).toBe(0);
    expect(deploy.outputs).toMatchObject({ status: 'live', target: 'production' });
    const v1 = deploy.outputs['deployment-id']!;
    expect(await page(await productionUrl())).toBe('<h1>hello from main</h1>');

    // 2. A pull request changes the app: the bot's preview goes live beside production.
    const first = h.push('feature', { 'message.txt': 'version 2' });
    h.github.pulls.set(7, pullRequest(spec(first)));
    await github('pull_request', pullRequestEvent('opened', spec(first)));
    const check1 = await h.waitForCheck(first, 'Slipway Preview', (r) => r.conclusion === 'success', 30_000);
    const preview1 = await h.client.deployments.get(check1.external_id);
    expect(preview1).toMatchObject({ target: 'preview', status: 'live', commitHash: first });
    await waitFor('comment with the preview URL', () => h.github.sticky(7)?.includes(preview1.url), 10_000);
    expect(await page(preview1.url)).toBe('<h1>version 2</h1>');
    expect(await page(await productionUrl())).toBe('<h1>hello from main</h1>');

    // 3. A second push to the pull request supersedes the first preview (a still running one's
    // check would end neutral, "superseded by <sha>": test/bot/previews.test.ts shows that).
    const second = h.push('feature', { 'message.txt': 'version 3' });
    h.github.pulls.set(7, pullRequest(spec(second)));
    await github('pull_request', pullRequestEvent('synchronize', spec(second), { before: first }));
    const check2 = await h.waitForCheck(second, 'Slipway Preview', (r) => r.conclusion === 'success', 30_000);
    const preview2 = await h.client.deployments.get(check2.external_id);
    expect(await page(preview2.url)).toBe('<h1>version 3</h1>');
    // The pull request now points at the new preview: the comment and its GitHub Deployment.
    await waitFor(
      'comment to show the new preview',
      () => h.github.sticky(7)?.includes(preview2.url),
      10_000,
    );
    expect(h.github.sticky(7)).not.toContain(preview1.url);
    const latest = h.github.deployments(7).at(-1)!;
    expect(latest.statuses.at(-1)).toMatchObject({ state: 'success', environment_url: preview2.url });

    // 4. Merge: the bot promotes that exact preview; production serves it without a rebuild.
    const merged = spec(second, { merged: true, state: 'closed', mergeSha: h.repo.git('rev-parse', 'main') });
    h.github.pulls.set(7, pullRequest(merged));
    await github('pull_request', pullRequestEvent('closed', merged));
    await waitFor(
      'production is the promoted preview',
      async () => (await h.client.projects.get(h.project.id)).productionDeploymentId === preview2.id,
      20_000,
    );
    const promoted = await h.client.deployments.get(preview2.id);
    expect(promoted).toMatchObject({ target: 'production', status: 'live' });
    expect(promoted.promotedAt).not.toBeNull();
    expect(await page(await productionUrl())).toBe('<h1>version 3</h1>');
    const builds = await h.client.deployments.list(h.project.id, { limit: 100 });
    // Production, two previews: the merge built nothing.
    expect(builds.meta.total).toBe(3);

    // 5. The Action rolls production back to version 1.
    const rollback = await action(
      'rollback',
      {},
      pushEvent({ sha: main, branch: 'main', message: 'Roll back' }),
    );
    expect(rollback.code, rollback.stdout + rollback.stderr).toBe(0);
    expect(rollback.outputs['rollback-from']).toBe(preview2.id);
    expect(await page(await productionUrl())).toBe('<h1>hello from main</h1>');
    const restored = await h.client.deployments.get(rollback.outputs['deployment-id']!);
    expect(restored.commitHash).toBe((await h.client.deployments.get(v1)).commitHash);

    // 6. The metrics counted the requests made along the way; every webhook delivery succeeded.
    await waitFor(
      'metrics to count our requests',
      async () =>
        ((await h.client.monitoring.metrics(h.project.id, { period: '1h' })).metrics.requests?.total ?? 0) >=
        edgeRequests,
      10_000,
    );
    await h.bot.idle();
    const statuses: string[] = [];
    for await (const hook of h.client.iterate.webhooks(h.project.id)) {
      for await (const d of h.client.iterate.deliveries(h.project.id, hook.id)) statuses.push(d.status);
    }
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s !== 'success')).toEqual([]);
    expect(h.github.violations()).toEqual([]);
  }, 120_000);
});
