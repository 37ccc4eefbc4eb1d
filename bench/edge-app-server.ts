/**
 * The server side of the `edge-app` benchmark, in its own process: the whole service (API,
 * worker, edge) on 127.0.0.1 with one deployment of kind `node` (the 1 KiB node:http app of
 * edge-app.ts), built and started in the sandbox as for any visitor. Prints one JSON line, then
 * serves until killed. A control server on 127.0.0.1 stops the app (as the idle timer does) and
 * says where it runs:
 *
 * - `GET /app`: `{ port, pids }`: the app's forwarded port on 127.0.0.1, and the processes of its
 *   sandbox (pasta, the sandbox's helpers and the app), for their CPU time;
 * - `POST /stop`: stops the app; the edge's next request for it starts it again (a cold start).
 */
import { createServer } from 'node:http';
import type { RuntimeSupervisor } from '../server/features/serving/edge/runtime.ts';
import { descendants } from '../server/platform/sandbox/processes.ts';
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { startStack } from '../test/helpers/stack.ts';

const appSource = process.env.BENCH_APP_SOURCE;
if (!appSource) throw new Error('BENCH_APP_SOURCE: the app to deploy');

const stack = await startStack({ env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000' } });
const repo = createGitRepo({
  files: {
    // No start script: the app is started as `node server.mjs` (found as its entry file), the
    // command the bare case runs; `npm start` would add npm's own start-up to every cold start.
    'package.json': JSON.stringify({ name: 'bench-app', private: true }),
    'server.mjs': appSource,
  },
});
const { token, orgId } = await stack.user('bench@example.com');
const api = stack.client(token);
const project = await api.projects.create({
  name: 'bench-app',
  repositoryUrl: repo.url,
  organizationId: orgId,
});
const d = await api.deployments.create(project.id);
for (;;) {
  const cur = await api.deployments.get(d.id);
  if (cur.status === 'live') break;
  if (cur.status === 'failed') throw new Error(`bench deployment failed: ${cur.errorMessage}`);
  await new Promise((r) => setTimeout(r, 50));
}
const live = await api.deployments.get(d.id);
const host = new URL(live.url).host;
// The edge starts the app on its first request.
const first = await stack.fetchFromEdge(live.url);
if (first.status !== 200) throw new Error(`the app answered ${first.status}: ${await first.text()}`);
const supervisor = stack.running.edge!.supervisor as RuntimeSupervisor;

const control = createServer((req, res) => {
  const send = (body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'POST' && req.url === '/stop') {
    void supervisor.stop(d.id).then(() => send({ stopped: true }));
    return;
  }
  const status = supervisor.status(d.id);
  send(status ? { port: status.port, pids: status.pid ? [status.pid, ...descendants(status.pid)] : [] } : {});
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
const { port: controlPort } = control.address() as { port: number };

process.stdout.write(
  JSON.stringify({
    edgeUrl: stack.edgeUrl,
    host,
    deploymentId: d.id,
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
