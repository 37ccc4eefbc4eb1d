import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactReader } from '../../../server/edge/artifact-reader.ts';
import { createRuntimeLauncher, type RuntimeLauncher } from '../../../server/edge/launcher.ts';
import { createHostResolver, type HostResolver, type Target } from '../../../server/edge/resolve-host.ts';
import { createRuntimeSupervisor, type RuntimeSupervisor } from '../../../server/edge/runtime.ts';
import { createEdgeServer } from '../../../server/edge/server.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { edgeRequest, insertDeployment, insertProject, listen, storeSite } from '../../helpers/edge.ts';

/** A Node server app as the builder stores one: the whole checkout, started by a shell command. */
const APP = `
import { createServer } from 'node:http';
createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ pid: process.pid, greeting: process.env.GREETING ?? null, cwd: process.cwd() }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('edge: starting server apps on demand', () => {
  let t: TestApp;
  let supervisor: RuntimeSupervisor;
  let launcher: RuntimeLauncher;
  let resolver: HostResolver;
  let edge: Server;
  let port: number;
  let runtimesDir: string;
  const lines: { id: string; line: string }[] = [];
  const envCalls: Target[] = [];
  let orgId: string;
  let artifactId: string;

  const nodeRuntime = (startCommand: string) => JSON.stringify({ kind: 'node', spa: false, startCommand });
  const get = (host: string, path = '/') => edgeRequest(port, `${host}.localhost`, path);

  beforeAll(async () => {
    t = await createTestApp();
    orgId = (await t.user('alice@example.com')).orgId;
    const root = t.deps.config.artifactsDir;
    runtimesDir = join(t.dataDir, 'runtimes');
    artifactId = await storeSite(root, {
      'server.mjs': APP,
      'exits.mjs': 'console.error("DATABASE_URL is not set"); process.exit(2);',
      'lib/data.json': '{"ok":true}',
    });
    supervisor = createRuntimeSupervisor({
      sandbox: t.deps.sandbox,
      log: (id, line) => lines.push({ id, line }),
      startTimeoutMs: 5000,
    });
    launcher = createRuntimeLauncher({
      supervisor,
      artifacts: createArtifactReader(root),
      runtimesDir,
      env: async (target) => {
        envCalls.push(target);
        return { GREETING: `hello ${target.environment}` };
      },
      idleStopMs: 200,
      retryAfterMs: 60_000,
    });
    resolver = createHostResolver(t.deps, { ttlMs: 0 });
    edge = createEdgeServer({ resolver, artifactsRoot: root, supervisor, launcher });
    port = await listen(edge);
  });
  afterAll(async () => {
    launcher.close();
    await supervisor.stopAll();
    await new Promise((r) => edge.close(r));
    await t.close();
  });

  it('writes the artifact out and starts the app on the first requests, once', async () => {
    const p = await insertProject(t, orgId);
    const d = await insertDeployment(t, p.id, {
      target: 'preview',
      artifact_id: artifactId,
      runtime: nodeRuntime('node server.mjs'),
    });
    const answers = await Promise.all([get(d.host), get(d.host, '/a'), get(d.host, '/b')]);
    for (const a of answers) expect(a.status).toBe(200);
    const bodies = answers.map((a) => JSON.parse(a.text));
    expect(new Set(bodies.map((b) => b.pid)).size).toBe(1);
    expect(bodies[0]).toMatchObject({ greeting: 'hello preview', cwd: join(runtimesDir, artifactId) });
    expect(readFileSync(join(runtimesDir, artifactId, 'lib', 'data.json'), 'utf8')).toBe('{"ok":true}');
    expect(envCalls.filter((c) => c.deploymentId === d.id)).toHaveLength(1);
    expect(lines.filter((l) => l.id === d.id && l.line.startsWith('[slipway] starting'))).toEqual([
      {
        id: d.id,
        line: expect.stringMatching(/^\[slipway\] starting \/bin\/sh -c node server\.mjs on port \d+$/),
      },
    ]);
  });

  it('stops an idle app and starts it again on the next request', async () => {
    const p = await insertProject(t, orgId);
    const d = await insertDeployment(t, p.id, {
      artifact_id: artifactId,
      runtime: nodeRuntime('node server.mjs'),
    });
    const first = JSON.parse((await get(d.host)).text);
    expect(first.greeting).toBe('hello production');
    // The host's pid of the app's sandbox: the pid the app sees is of its own PID namespace.
    const firstPid = supervisor.status(d.id)!.pid!;
    await expect.poll(() => supervisor.status(d.id), { timeout: 5000 }).toBeUndefined();
    await expect.poll(() => isAlive(firstPid), { timeout: 5000 }).toBe(false);
    const second = JSON.parse((await get(d.host)).text);
    expect(second.greeting).toBe('hello production');
    expect(supervisor.status(d.id)!.pid).not.toBe(firstPid);
  });

  it('runs a rollback from the build it reuses', async () => {
    const p = await insertProject(t, orgId);
    const source = await insertDeployment(t, p.id, {
      artifact_id: artifactId,
      runtime: nodeRuntime('node server.mjs'),
    });
    const rollback = await insertDeployment(t, p.id, { source_deployment_id: source.id });
    const res = await get(rollback.host);
    expect(res.status).toBe(200);
    expect(res.headers['x-slipway-deployment']).toBe(rollback.id);
    expect(JSON.parse(res.text).greeting).toBe('hello production');
  });

  it('answers 502 when the app cannot start, without retrying on every request', async () => {
    const p = await insertProject(t, orgId);
    const d = await insertDeployment(t, p.id, {
      artifact_id: artifactId,
      runtime: nodeRuntime('node exits.mjs'),
    });
    const first = await get(d.host);
    expect(first.status).toBe(502);
    expect(first.text).toContain('The app could not start');
    const second = await get(d.host);
    expect(second.status).toBe(502);
    expect(lines.filter((l) => l.id === d.id && l.line.startsWith('[slipway] starting'))).toHaveLength(1);
    expect(lines).toContainEqual({ id: d.id, line: 'DATABASE_URL is not set' });
    expect(existsSync(join(runtimesDir, artifactId))).toBe(true);
  });
});
