/**
 * `npm run demo`: the whole Slipway story for a person, offline, narrated step by step, then
 * left running so the URLs can be opened. It drives the same pieces as test/e2e/story.test.ts:
 * the service (API, worker, edge), the GitHub App on its own HTTP server, the bundled Action, a
 * local git repository, and a local stand-in for GitHub's API.
 */
import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { ensureBundle } from '../test/action/bundle.ts';
import { pushEvent, runAction } from '../test/action/run-action.ts';
import { GITHUB_SECRET, startHarness } from '../test/bot/helpers/harness.ts';
import { pullRequest, pullRequestEvent, type PrSpec } from '../test/bot/helpers/payloads.ts';
import { waitFor } from '../test/helpers/wait-for.ts';

const say = (text: string) => process.stdout.write(`${text}\n`);
const step = (n: number, title: string) => say(`\n\x1b[1m${n}. ${title}\x1b[0m`);

say('Starting Slipway (API, build worker, edge), the GitHub App and a stand-in for GitHub...');
await ensureBundle();
const h = await startHarness();
const token = (await h.client.user.tokens.create({ name: 'demo' })).token;
const edge = (url: string) => h.stack.fetchFromEdge(url).then((r) => r.text());
const productionUrl = async () => (await h.client.projects.get(h.project.id)).deploymentUrl!;
const github = async (name: string, payload: unknown) => {
  const body = JSON.stringify(payload);
  await fetch(`${h.botUrl}/api/github/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': name,
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': await sign(GITHUB_SECRET, body),
    },
    body,
  });
};
const action = (command: string, sha: string) => {
  const event = pushEvent({ sha, branch: 'main', message: 'demo' });
  return runAction({
    inputs: {
      command,
      'api-url': h.stack.apiUrl,
      'api-token': token,
      project: h.project.id,
      'github-token': 'ghs_demo',
    },
    event: event.event,
    env: { ...event.env, GITHUB_API_URL: h.github.url },
  });
};
const spec = (headSha: string, extra: Partial<PrSpec> = {}): PrSpec => ({
  number: 1,
  headSha,
  headRef: 'feature',
  ...extra,
});
const previewOf = async (sha: string) => {
  const run = (await h.waitForCheck(
    sha,
    'Slipway Preview',
    (r: { conclusion: string | null }) => r.conclusion === 'success',
    60_000,
  )) as { external_id: string };
  return h.client.deployments.get(run.external_id);
};

say(`Project "${h.project.name}" builds from the git repository in ${h.repo.dir}`);

step(1, 'A push to main: the GitHub Action deploys to production');
const main = h.repo.git('rev-parse', 'HEAD');
const deployed = await action('deploy', main);
say(
  `   The Action finished with exit code ${deployed.code}; deployment ${deployed.outputs['deployment-id']} is ${deployed.outputs.status}.`,
);
say(`   Production: ${await productionUrl()}  ->  ${await edge(await productionUrl())}`);

step(2, 'A pull request changes the page: the bot builds a preview');
const first = h.push('feature', { 'message.txt': 'version 2, from a pull request' });
h.github.pulls.set(1, pullRequest(spec(first)));
await github('pull_request', pullRequestEvent('opened', spec(first)));
const preview1 = await previewOf(first);
say(`   The check "Slipway Preview" succeeded and the pull request's comment links the preview.`);
say(`   Preview:    ${preview1.url}  ->  ${await edge(preview1.url)}`);
say(`   Production: ${await productionUrl()}  ->  ${await edge(await productionUrl())}  (unchanged)`);

step(
  3,
  'Another push to the pull request: a preview of the new commit, which the comment and check now link',
);
const second = h.push('feature', { 'message.txt': 'version 3, after review' });
h.github.pulls.set(1, pullRequest(spec(second)));
await github('pull_request', pullRequestEvent('synchronize', spec(second), { before: first }));
const preview2 = await previewOf(second);
say(`   New preview: ${preview2.url}  ->  ${await edge(preview2.url)}`);
say(
  `   The first preview keeps its own URL, as every deployment does: ${preview1.url}  ->  ${await edge(preview1.url)}`,
);

step(4, 'A maintainer merges: the bot promotes that exact preview, no rebuild');
const merged = spec(second, { merged: true, state: 'closed', mergeSha: main });
h.github.pulls.set(1, pullRequest(merged));
await github('pull_request', pullRequestEvent('closed', merged));
await waitFor(
  'the promotion',
  async () => (await h.client.projects.get(h.project.id)).productionDeploymentId === preview2.id,
  30_000,
);
say(`   Production: ${await productionUrl()}  ->  ${await edge(await productionUrl())}`);

step(5, 'Something is wrong: the Action rolls production back');
const rolled = await action('rollback', main);
say(
  `   Rolled back from ${rolled.outputs['rollback-from']} with deployment ${rolled.outputs['deployment-id']}.`,
);
say(`   Production: ${await productionUrl()}  ->  ${await edge(await productionUrl())}`);

step(6, 'What the service measured');
await new Promise((r) => setTimeout(r, 1500));
const metrics = await h.client.monitoring.metrics(h.project.id, { period: '1h' });
say(
  `   Requests served: ${metrics.metrics.requests?.total}, bandwidth: ${metrics.metrics.bandwidth?.total} bytes`,
);
say(
  `   The PR comment the bot keeps up to date:\n${(h.github.sticky(1) ?? '')
    .replace(/<!--.*?-->/gs, '')
    .trim()
    .replace(/^/gm, '   | ')}`,
);

say(`\nEverything is still running. Try:`);
say(
  `   curl -s ${h.stack.apiUrl}/v1/projects/${h.project.id}/deployments -H "Authorization: Bearer ${token}"`,
);
say(`   curl -s ${await productionUrl()}`);
say(`   and open ${h.stack.apiUrl}/docs in a browser (the API reference)`);
say('Press Ctrl+C to stop.');
process.once('SIGINT', () => void h.stop().then(() => process.exit(0)));
