/**
 * The server side of the build and edge benchmarks, in its own process: the whole service
 * (API, worker, edge) on 127.0.0.1 and a static repository deployed once, with a 10 KiB file.
 * Prints one JSON line, then serves until killed.
 */
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { startStack } from '../test/helpers/stack.ts';

const allow = process.env.SLIPWAY_SANDBOX_ALLOW;
const stack = await startStack({
  env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000', ...(allow ? { SLIPWAY_SANDBOX_ALLOW: allow } : {}) },
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
  }) + '\n',
);
process.on('SIGINT', () => void stack.stop().then(() => process.exit(0)));
process.on('SIGTERM', () => void stack.stop().then(() => process.exit(0)));
