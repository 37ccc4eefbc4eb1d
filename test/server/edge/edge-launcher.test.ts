import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactReader } from '../../../server/features/serving/edge/artifact-reader.ts';
import {
  createRuntimeLauncher,
  type RuntimeLauncher,
} from '../../../server/features/serving/edge/launcher.ts';
import { proxyFor } from '../../../server/features/serving/edge/proxy.ts';
import {
  createHostResolver,
  type HostResolver,
  type Target,
} from '../../../server/features/serving/edge/resolve-host.ts';
import {
  createRuntimeSupervisor,
  type RuntimeSupervisor,
} from '../../../server/features/serving/edge/runtime.ts';
import { createEdgeServer } from '../../../server/features/serving/edge/server.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { edgeRequest, insertDeployment, insertProject, listen, storeSite } from '../../helpers/edge.ts';
import { isGone } from '../../helpers/process.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createServiceSandbox } from '../../../server/platform/sandbox/index.ts';

/** A Node server app as the builder stores one: the whole checkout, started by a shell command. */
const APP = `
import { createServer } from 'node:http';
createServer((req, res) => {
  if (req.url.startsWith('/slow')) {
    // A long streamed answer: a line every 100 ms for ?ms=, then the pid that answered.
    const ms = Number(new URL(req.url, 'http://x').searchParams.get('ms'));
    const tick = setInterval(() => res.write('tick\\n'), 100);
    setTimeout(() => (clearInterval(tick), res.end('done ' + process.pid)), ms);
    return;
  }
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

/** Resolves when `release()` is called: holds a start at a chosen step. */
function gate(): { wait: Promise<void>; release(): void } {
  let release!: () => void;
  const wait = new Promise<void>((r) => (release = r));
  return { wait, release };
}

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
      sandbox: await createServiceSandbox(t.deps.config),
      log: (id, line) => lines.push({ id, line }),
      // Generous: a sandboxed start on a loaded 2-core machine can take seconds; no test waits it out.
      startTimeoutMs: 20_000,
    });
    // Wired as the edge role does: one proxy, which the launcher asks whether an app is answering.
    const proxy = proxyFor(supervisor);
    launcher = createRuntimeLauncher({
      supervisor,
      inUse: (port) => proxy.inUse(port),
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
    edge = createEdgeServer({ resolver, artifactsRoot: root, supervisor, launcher, proxy });
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

  it('does not stop an app as idle while it answers a long request, and stops it after', async () => {
    const p = await insertProject(t, orgId);
    const d = await insertDeployment(t, p.id, {
      artifact_id: artifactId,
      runtime: nodeRuntime('node server.mjs'),
    });
    const { pid } = JSON.parse((await get(d.host)).text);
    // Eight times the idle time (200 ms), with no other request meanwhile.
    const slow = await get(d.host, '/slow?ms=1600');
    expect(slow.status).toBe(200);
    expect(slow.text.match(/tick/g)?.length).toBeGreaterThanOrEqual(10);
    expect(slow.text.endsWith(`done ${pid}`)).toBe(true);
    await expect.poll(() => supervisor.status(d.id), { timeout: 5000 }).toBeUndefined();
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

describe('edge: stopping the apps of one project', () => {
  let t: TestApp;
  let supervisor: RuntimeSupervisor;
  let launcher: RuntimeLauncher;
  let artifactId: string;
  const gates = new Map<string, Promise<void>>();

  beforeAll(async () => {
    t = await createTestApp();
    const root = t.deps.config.artifactsDir;
    artifactId = await storeSite(root, {
      'server.mjs': APP,
      // Listens after a second: stopProject() meets it while the supervisor waits for the port.
      'slow.mjs': `setTimeout(() => import('./server.mjs'), 1000);`,
    });
    supervisor = createRuntimeSupervisor({
      sandbox: await createServiceSandbox(t.deps.config),
      log: () => undefined,
      startTimeoutMs: 10_000,
    });
    // Wired as the edge role does: one proxy, which the launcher asks whether an app is answering.
    const proxy = proxyFor(supervisor);
    launcher = createRuntimeLauncher({
      supervisor,
      inUse: (port) => proxy.inUse(port),
      artifacts: createArtifactReader(root),
      runtimesDir: join(t.dataDir, 'runtimes'),
      // A start waits here, after writing the files out and before running anything, when told to.
      env: async (target) => {
        await gates.get(target.deploymentId);
        return {};
      },
      idleStopMs: 0,
      retryAfterMs: 60_000,
    });
  });
  afterAll(async () => {
    launcher.close();
    await supervisor.stopAll();
    await t.close();
  });

  let n = 0;
  const target = (projectId: string, file = 'server.mjs'): Target => ({
    projectId,
    deploymentId: `dpl_stop${++n}`,
    artifactId,
    kind: 'node',
    spa: false,
    startCommand: `node ${file}`,
    environment: 'production',
  });
  const pidOf = (t: Target) => supervisor.status(t.deploymentId)!.pid!;

  it("stops every app of the project, also one still starting, and leaves other projects' apps running", async () => {
    const [a1, a2, b1] = [target('prj_a'), target('prj_a'), target('prj_b')];
    for (const x of [a1, a2, b1]) await launcher.ensure(x);
    const slow = target('prj_a', 'slow.mjs');
    // Its rejection is awaited below, after the stop: caught now, so it is never unhandled meanwhile.
    const starting = launcher.ensure(slow).then(
      () => null,
      (err: Error) => err,
    );
    const slowPid = await waitFor(
      'the slow app to be spawned',
      () => supervisor.status(slow.deploymentId)?.pid,
    );
    const pids = { a1: pidOf(a1), a2: pidOf(a2), b1: pidOf(b1) };
    expect(launcher.projects().sort()).toEqual(['prj_a', 'prj_b']);

    await launcher.stopProject('prj_a');
    expect((await starting)?.message).toMatch(/did not start: it was stopped/);
    for (const pid of [pids.a1, pids.a2, slowPid]) expect(isGone(pid)).toBe(true);
    for (const x of [a1, a2, slow]) expect(supervisor.status(x.deploymentId)).toBeUndefined();
    expect(isAlive(pids.b1)).toBe(true);
    expect(launcher.projects()).toEqual(['prj_b']);

    // A stop is not a failed start: the next request starts the app, not a 60 s refusal.
    expect(await launcher.ensure(slow)).toBe(supervisor.portOf(slow.deploymentId));
    expect(isAlive(pidOf(slow))).toBe(true);
    await launcher.stopProject('prj_b');
    expect(isGone(pids.b1)).toBe(true);
    expect(launcher.projects()).toEqual(['prj_a']);
  });

  it('a start still writing files out when its project stops runs nothing', async () => {
    const held = target('prj_c');
    const g = gate();
    gates.set(held.deploymentId, g.wait);
    const starting = launcher.ensure(held).then(
      () => null,
      (err: Error) => err,
    );
    await waitFor('the start to reach the gate', () => launcher.projects().includes('prj_c'));
    const stopping = launcher.stopProject('prj_c');
    g.release();
    await stopping;
    expect((await starting)?.message).toMatch(
      /was stopped while it started: its project was suspended or deleted/,
    );
    expect(supervisor.status(held.deploymentId)).toBeUndefined();
    expect(launcher.projects()).toEqual(['prj_a']);

    gates.delete(held.deploymentId);
    await launcher.ensure(held);
    expect(isAlive(pidOf(held))).toBe(true);
  });
});
