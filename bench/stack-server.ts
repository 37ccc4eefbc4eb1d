/**
 * The server side of the build and edge benchmarks, in its own process: the whole service
 * (API, worker, edge) on 127.0.0.1 and a static repository deployed once, with a 10 KiB file.
 * Prints one JSON line, then serves until killed.
 */
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { startStack } from '../test/helpers/stack.ts';

// Passed on when the bench sets them: the sandbox's allowances, the operator's metrics (bench/ops-metrics.ts).
const passed = ['SLIPWAY_SANDBOX_ALLOW', 'SLIPWAY_METRICS_PORT', 'SLIPWAY_METRICS_TOKEN'].flatMap((name) => {
  const value = process.env[name];
  return value ? [[name, value] as const] : [];
});
const stack = await startStack({
  env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000', ...Object.fromEntries(passed) },
});
const repo = createGitRepo({
  files: { 'index.html': '<h1>bench</h1>\n', 'file-10k.txt': 'x'.repeat(10 * 1024) },
});
const { token, orgId } = await stack.user('bench@example.com');
const api = stack.client(token);
const project = await api.projects.create({ name: 'bench', repositoryUrl: repo.url, organizationId: orgId });
const d = await api.deployments.create(project.id);
for (;;) {
  const cur = await api.deployments.get(d.id);
  if (cur.status === 'live') break;
  if (cur.status === 'failed') throw new Error(`bench deployment failed: ${cur.errorMessage}`);
  await new Promise((r) => setTimeout(r, 50));
}
const live = await api.deployments.get(d.id);
process.stdout.write(
  JSON.stringify({
    apiUrl: stack.apiUrl,
    edgeUrl: stack.edgeUrl,
    token,
    projectId: project.id,
    host: new URL(live.url).host,
    repoDir: repo.dir,
    repoUrl: repo.url,
    metricsUrl: stack.running.metricsUrl,
  }) + '\n',
);
process.on('SIGINT', () => void stack.stop().then(() => process.exit(0)));
process.on('SIGTERM', () => void stack.stop().then(() => process.exit(0)));
