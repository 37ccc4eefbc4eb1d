/**
 * The server side of the `next-ssr` and `next-rebuild` benchmarks, in its own process: the whole
 * service (API, worker, edge) on 127.0.0.1 with the create-next-app starter (test/helpers/starters.ts)
 * plus one page that renders per request (`/now`), deployed with no settings as any user's:
 * built in the sandbox (its install reaches the npm registry, SLIPWAY_SANDBOX_ALLOW), stored as
 * Next.js's standalone output, started by the edge on its first request. Prints one JSON line
 * once the deployment is live, its app started and its build cache saved, then serves until killed.
 * A control server on 127.0.0.1 says where the app runs: `GET /app` -> `{ port, pids }`: its forwarded port on 127.0.0.1 and the processes
 * of its sandbox (pasta, the sandbox's helpers and `node server.js`), for their CPU time.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { RuntimeSupervisor } from '../server/features/serving/edge/runtime.ts';
import { descendants } from '../server/platform/sandbox/processes.ts';
import { FRAMEWORK_ENV, starterWith } from '../test/frameworks/deploy-starter.ts';
import { startStack } from '../test/helpers/stack.ts';
import { NEXT_SSR_PAGE } from './next-page.ts';

const stack = await startStack({
  env: { ...FRAMEWORK_ENV, SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000' },
});
const repo = await starterWith('next', NEXT_SSR_PAGE);
const { token, orgId } = await stack.user('bench@example.com');
const api = stack.client(token);
const project = await api.projects.create({
  name: 'next-bench',
  repositoryUrl: repo.url,
  organizationId: orgId,
});
const began = Date.now();
const d = await api.deployments.create(project.id, { target: 'production', branch: 'main' });
for (;;) {
  const cur = await api.deployments.get(d.id);
  if (cur.status === 'live') break;
  if (cur.status === 'failed') {
    const { logs } = await api.deployments.logs(d.id, { tail: 200 });
    throw new Error(`bench deployment failed: ${cur.errorMessage}\n${logs}`);
  }
  await new Promise((r) => setTimeout(r, 250));
}
const firstBuildMs = Date.now() - began;
const live = await api.deployments.get(d.id);
// The edge starts the app on its first request.
const first = await stack.fetchFromEdge(`${live.url.replace(/\/$/, '')}/now`);
if (first.status !== 200) throw new Error(`the app answered ${first.status}: ${await first.text()}`);
// The cache is saved after live; the rebuild bench's second build needs it.
for (let i = 0; ; i++) {
  const { logs } = await api.deployments.logs(d.id, { tail: 1000 });
  if (/Build cache: (saved|not saved)/.test(logs)) break;
  if (i > 1200) throw new Error('the first build saved no cache');
  await new Promise((r) => setTimeout(r, 100));
}
const supervisor = stack.running.edge!.supervisor as RuntimeSupervisor;
const control = createServer((_req, res) => {
  const status = supervisor.status(d.id);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      port: status?.port,
      pids: status?.pid ? [status.pid, ...descendants(status.pid)] : [],
    }),
  );
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
const { port: controlPort } = control.address() as { port: number };
const repoDir = new URL(repo.url).pathname;
process.stdout.write(
  JSON.stringify({
    apiUrl: stack.apiUrl,
    edgeUrl: stack.edgeUrl,
    token,
    projectId: project.id,
    deploymentId: d.id,
    host: new URL(live.url).host,
    repoDir,
    commit: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoDir, encoding: 'utf8' }).trim(),
    firstBuildMs,
    controlUrl: `http://127.0.0.1:${controlPort}`,
  }) + '\n',
);
const stop = () => {
  control.close();
  void stack.stop().then(() => {
    repo.remove();
    process.exit(0);
  });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
