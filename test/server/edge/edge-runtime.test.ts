import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver } from '../../../server/features/serving/edge/resolve-host.ts';
import { createRuntimeLogSink } from '../../../server/features/serving/edge/runtime-log.ts';
import {
  createRuntimeSupervisor,
  type RuntimeSupervisor,
} from '../../../server/features/serving/edge/runtime.ts';
import { proxyFor, type Proxy } from '../../../server/features/serving/edge/proxy.ts';
import { createEdgeServer } from '../../../server/features/serving/edge/server.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { ManualClock } from '../../helpers/clock.ts';
import { edgeRequest, insertDeployment, insertProject, listen } from '../../helpers/edge.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createServiceSandbox } from '../../../server/platform/sandbox/index.ts';

/** A tiny Node server app, as a user would deploy one: it listens on process.env.PORT. */
const APP = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  if (req.url === '/crash') {
    console.error('about to crash');
    process.exit(1);
  }
  if (req.url === '/big') {
    // 2 MiB in 64 KiB chunks, chunked: the edge streams it with backpressure.
    let sent = 0;
    const more = () => {
      while (sent < 32) {
        sent++;
        if (!res.write(Buffer.alloc(65536, sent % 10 + 48))) return void res.once('drain', more);
      }
      res.end();
    };
    return more();
  }
  if (req.url === '/stream') {
    // The head at once, the body only once /release is asked: a page streamed as it renders.
    res.writeHead(200, { 'content-type': 'text/html' });
    res.flushHeaders();
    globalThis.release = () => res.end('rendered');
    return;
  }
  if (req.url === '/release') {
    globalThis.release();
    return res.end('released');
  }
  if (req.url === '/empty') {
    res.writeHead(204, { 'x-kept': 'yes', connection: 'x-dropped', 'x-dropped': '1' });
    return res.end();
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.setHeader('content-type', 'application/json');
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.end(JSON.stringify({
      method: req.method,
      url: req.url,
      headers: req.headers,
      bodyLength: body.length,
      bodyStart: body.subarray(0, 16).toString(),
      greeting: process.env.GREETING ?? null,
      leaked: process.env.SLIPWAY_TEST_SECRET ?? null,
      pid: process.pid,
      remotePort: req.socket.remotePort,
    }));
  });
});
server.on('upgrade', (req, socket) => {
  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: echo\\r\\nConnection: Upgrade\\r\\n' +
    'X-Seen-Host: ' + req.headers['x-forwarded-host'] + '\\r\\n' +
    'X-Seen-Probe: ' + (req.headers['x-slipway-probe'] ?? 'none') + '\\r\\n\\r\\n');
  socket.on('data', (d) => socket.write(d));
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening on ' + process.env.PORT));
`;

describe('edge: server apps', () => {
  let t: TestApp;
  let dir: string;
  let supervisor: RuntimeSupervisor;
  let edge: Server;
  let proxy: Proxy;
  let port: number;
  const lines: { id: string; line: string; stream: string }[] = [];
  let deploymentId: string;
  let host: string;

  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'slipway-app-'));
    // The app runs as the sandbox's user, who must be able to read its files.
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'server.mjs'), APP);
    writeFileSync(join(dir, 'never-listens.mjs'), 'setInterval(() => {}, 1000);');
    writeFileSync(join(dir, 'exits.mjs'), 'console.error("missing config"); process.exit(3);');
    supervisor = createRuntimeSupervisor({
      sandbox: await createServiceSandbox(t.deps.config),
      log: (id, line, stream) => lines.push({ id, line, stream }),
      backoff: { initialMs: 100, maxMs: 400 },
      // Generous: a sandboxed start on a loaded 2-core machine can take seconds; no test waits it out.
      startTimeoutMs: 20_000,
    });
    const alice = await t.user('alice@example.com');
    const p = await insertProject(t, alice.orgId, { name: 'api' });
    const d = await insertDeployment(t, p.id);
    deploymentId = d.id;
    host = `${d.host}.localhost`;
    proxy = proxyFor(supervisor);
    edge = createEdgeServer({
      resolver: createHostResolver(t.deps, { ttlMs: 0, runtimePort: (id) => supervisor.portOf(id) }),
      artifactsRoot: t.deps.config.artifactsDir,
      supervisor,
      proxy,
    });
    port = await listen(edge);
  });
  afterAll(async () => {
    await supervisor.stopAll();
    await new Promise((r) => edge.close(r));
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the app on a free port, captures its output and proxies to it', async () => {
    process.env.SLIPWAY_TEST_SECRET = 'must not leak';
    const { port: appPort } = await supervisor.start(deploymentId, {
      dir,
      command: [process.execPath, 'server.mjs'],
      env: { GREETING: 'hello' },
    });
    delete process.env.SLIPWAY_TEST_SECRET;
    expect(appPort).toBeGreaterThan(0);
    expect(supervisor.portOf(deploymentId)).toBe(appPort);
    expect(supervisor.status(deploymentId)).toMatchObject({ state: 'running', port: appPort, restarts: 0 });
    await expect
      .poll(() =>
        lines.some(
          (l) => l.id === deploymentId && l.stream === 'stdout' && l.line === `listening on ${appPort}`,
        ),
      )
      .toBe(true);

    const body = 'x'.repeat(1_000_000);
    const res = await edgeRequest(port, host, '/submit?a=1', {
      method: 'POST',
      body,
      headers: {
        'content-type': 'text/plain',
        'x-forwarded-for': '203.0.113.9',
        connection: 'keep-alive, x-drop-me',
        'x-drop-me': '1',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-slipway-deployment']).toBe(deploymentId);
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    const seen = JSON.parse(res.text);
    expect(seen).toMatchObject({
      method: 'POST',
      url: '/submit?a=1',
      bodyLength: 1_000_000,
      bodyStart: 'xxxxxxxxxxxxxxxx',
      greeting: 'hello',
      leaked: null,
    });
    expect(seen.headers).toMatchObject({
      host,
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-host': host,
      'x-forwarded-proto': 'http',
    });
    expect(seen.headers['x-drop-me']).toBeUndefined();
  });

  it('keeps its connection to the app, streams large answers and passes bodiless ones', async () => {
    // Until the app's connection helper is ready, requests go through pasta on connections that
    // are not kept once it is; from then on, they come from the helper and are kept.
    const appPort = supervisor.portOf(deploymentId)!;
    await waitFor('the connection helper', () => supervisor.canConnect(appPort));
    // Two requests one after the other reach the app over the same connection.
    const first = JSON.parse((await edgeRequest(port, host, '/one')).text);
    const second = JSON.parse((await edgeRequest(port, host, '/two')).text);
    expect(second.remotePort).toBe(first.remotePort);

    const big = await edgeRequest(port, host, '/big');
    expect(big.status).toBe(200);
    expect(big.body.length).toBe(32 * 65536);
    expect(big.body.subarray(65536 * 31).every((b) => b === 48 + (32 % 10))).toBe(true);

    const head = await edgeRequest(port, host, '/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['x-slipway-deployment']).toBe(deploymentId);

    const empty = await edgeRequest(port, host, '/empty');
    expect(empty.status).toBe(204);
    expect(empty.headers['x-kept']).toBe('yes');
    // Named by the app's Connection header: about that one hop, not passed on.
    expect(empty.headers['x-dropped']).toBeUndefined();
    expect(empty.headers['x-slipway-deployment']).toBe(deploymentId);
  });

  it("passes an answer's head on as soon as the app sends it, ahead of its body", async () => {
    // Without it, the head would wait for the body, and the body for this head: no answer.
    const { status, headers, body } = await new Promise<{
      status: number;
      headers: IncomingHttpHeaders;
      body: Promise<string>;
    }>((resolve, reject) => {
      const req = request({ port, path: '/stream', headers: { host } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const body = new Promise<string>((done) =>
          res.on('end', () => done(Buffer.concat(chunks).toString())),
        );
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(headers['content-type']).toBe('text/html');
    expect(headers['x-slipway-deployment']).toBe(deploymentId);
    expect((await edgeRequest(port, host, '/release')).text).toBe('released');
    expect(await body).toBe('rendered');
  });

  it('opens connections to the app from inside its sandbox, so that pasta copies nothing', async () => {
    const appPort = supervisor.portOf(deploymentId)!;
    const socket = await new Promise<Socket | null>((resolve, reject) => {
      // The helper starts once the app listens; until it says it is ready, none is opened. On a
      // loaded machine that took over 5 s (the test's old timeout), hence the wider wait.
      const deadline = Date.now() + 20_000;
      const attempt = () => {
        if (supervisor.openConnection(appPort, resolve)) return;
        if (Date.now() > deadline) reject(new Error('no connection helper within 20 s'));
        else setTimeout(attempt, 5);
      };
      attempt();
    });
    expect(socket).not.toBeNull();
    socket!.end(`GET /direct HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket!.on('data', (d: Buffer) => (text += d.toString()));
      socket!.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ url: '/direct' });
    // No app on a port: nothing to open, the proxy goes through 127.0.0.1:port.
    expect(supervisor.openConnection(1, () => undefined)).toBe(false);
  }, 30_000);

  it('starts the next app in a sandbox made ready ahead, with its own command, files and variables', async () => {
    // Made half a second after the previous start.
    const sparePort = await waitFor('a sandbox made ready ahead', () => supervisor.sparePort(), 10_000);
    const { port: appPort } = await supervisor.start('dpl_spare', {
      dir,
      command: [process.execPath, 'server.mjs'],
      env: { GREETING: 'from the spare' },
    });
    expect(appPort).toBe(sparePort);
    const socket = connect(appPort, '127.0.0.1');
    socket.end('GET /spare HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      url: '/spare',
      greeting: 'from the spare',
      leaked: null,
    });
    await supervisor.stop('dpl_spare');
    // And the next one is made ready in turn.
    await waitFor('another sandbox made ready ahead', () => supervisor.sparePort(), 10_000);
  });

  it('forwards upgrades (WebSocket) to the app and refuses them for static sites', async () => {
    const upgrade = (h: string) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; socket?: Socket }>((resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port,
          // The edge's probe token never reaches an app, upgrades included.
          headers: { host: h, connection: 'Upgrade', upgrade: 'echo', 'x-slipway-probe': 'secret' },
          agent: false,
        });
        req.on('upgrade', (res, socket) =>
          resolve({ status: res.statusCode!, headers: res.headers, socket }),
        );
        req.on('response', (res) => {
          res.resume();
          resolve({ status: res.statusCode!, headers: res.headers });
        });
        req.on('error', reject);
        req.end();
      });
    const ok = await upgrade(host);
    expect(ok.status).toBe(101);
    expect(ok.headers['x-seen-host']).toBe(host);
    expect(ok.headers['x-seen-probe']).toBe('none');
    const echoed = new Promise<string>((resolve) =>
      ok.socket!.once('data', (d: Buffer) => resolve(d.toString())),
    );
    ok.socket!.write('ping');
    expect(await echoed).toBe('ping');
    // An open WebSocket keeps its app from being stopped as idle (the launcher asks inUse).
    const appPort = supervisor.portOf(deploymentId)!;
    expect(proxy.inUse(appPort)).toBe(true);
    ok.socket!.destroy();
    await expect.poll(() => proxy.inUse(appPort), { timeout: 20_000 }).toBe(false);
    const refused = await upgrade('nowhere.localhost');
    expect(refused.status).toBe(404);
  });

  it('answers 502 while the app is down, restarts it with backoff and logs why', async () => {
    const before = supervisor.status(deploymentId)!;
    const crash = await edgeRequest(port, host, '/crash');
    expect(crash.status).toBe(502);
    expect(crash.text).toContain('The app is not responding');
    // The exit is noticed a moment after the connection drops; the restart starts a new sandbox,
    // which a loaded machine can take seconds to do.
    await expect
      .poll(() => supervisor.status(deploymentId), { timeout: 30_000 })
      .toMatchObject({ state: 'running', restarts: 1 });
    const after = supervisor.status(deploymentId)!;
    expect(after.pid).not.toBe(before.pid);
    const res = await edgeRequest(port, host, '/again');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).pid).toBeGreaterThan(0);
    const mine = lines.filter((l) => l.id === deploymentId);
    expect(mine).toContainEqual({ id: deploymentId, line: 'about to crash', stream: 'stderr' });
    expect(mine.map((l) => l.line)).toContainEqual(
      expect.stringMatching(/^\[slipway\] process exited with code 1; restarting in 0\.1s$/),
    );
  }, 60_000);

  it('fails a start whose process exits or never listens, and leaves nothing running', async () => {
    await expect(
      supervisor.start('dpl_exits', { dir, command: [process.execPath, 'exits.mjs'], env: {} }),
    ).rejects.toThrow('The app of deployment dpl_exits did not start: the process exited');
    expect(lines).toContainEqual({ id: 'dpl_exits', line: 'missing config', stream: 'stderr' });
    expect(supervisor.status('dpl_exits')).toBeUndefined();

    const slow = createRuntimeSupervisor({
      sandbox: await createServiceSandbox(t.deps.config),
      log: (id, line, stream) => lines.push({ id, line, stream }),
      startTimeoutMs: 300,
    });
    await expect(
      slow.start('dpl_silent', { dir, command: [process.execPath, 'never-listens.mjs'], env: {} }),
    ).rejects.toThrow(/did not accept connections on port \d+ within 0\.3s/);
    expect(slow.status('dpl_silent')).toBeUndefined();

    await expect(
      supervisor.start('dpl_nocmd', { dir, command: ['/nonexistent/slipway-binary'], env: {} }),
    ).rejects.toThrow('did not start');
    expect(lines.some((l) => l.id === 'dpl_nocmd' && /ENOENT|No such file or directory/.test(l.line))).toBe(
      true,
    );
  });

  it('stops the process and forgets the deployment', async () => {
    const other = await supervisor.start('dpl_other', {
      dir,
      command: [process.execPath, 'server.mjs'],
      env: {},
    });
    const pid = supervisor.status('dpl_other')!.pid!;
    // Starting again reuses the running process.
    expect(
      await supervisor.start('dpl_other', { dir, command: [process.execPath, 'server.mjs'], env: {} }),
    ).toEqual(other);
    await supervisor.stop('dpl_other');
    expect(supervisor.portOf('dpl_other')).toBeUndefined();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(lines).toContainEqual({ id: 'dpl_other', line: '[slipway] stopped', stream: 'supervisor' });
  });

  it('writes runtime lines to the deployment log in batches', async () => {
    const sink = createRuntimeLogSink(t.deps, { flushMs: 10_000 });
    sink.log(deploymentId, 'first line', 'stdout');
    sink.log(deploymentId, 'second line', 'stderr');
    await sink.close();
    const rows = await t.deps.db
      .selectFrom('deployment_logs')
      .select(['type', 'line'])
      .where('deployment_id', '=', deploymentId)
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { type: 'runtime', line: 'first line' },
      { type: 'runtime', line: 'second line' },
    ]);
  });

  it('stores at most the limit per deployment per hour, says so, and stores again the next hour', async () => {
    const p = await insertProject(t, (await t.user('chatty@example.com')).orgId);
    const [chatty, quiet] = [await insertDeployment(t, p.id), await insertDeployment(t, p.id)];
    const clock = new ManualClock('2026-11-22T10:00:00.000Z');
    const sink = createRuntimeLogSink({ db: t.deps.db, clock }, { flushMs: 10_000, limitBytes: 1000 });
    const line = (i: number) => `request ${String(i).padStart(4, '0')} ${'x'.repeat(87)}`; // 100 bytes
    for (let i = 0; i < 50; i++) sink.log(chatty.id, line(i), 'stdout');
    sink.log(chatty.id, '[slipway] process exited with code 1; restarting in 1s', 'supervisor');
    sink.log(quiet.id, 'another app has its own budget', 'stdout');
    await sink.flush();
    clock.advance(60 * 60_000);
    sink.log(chatty.id, 'the next hour', 'stdout');
    await sink.close();

    const rows = await t.deps.db
      .selectFrom('deployment_logs')
      .select(['deployment_id', 'line'])
      .where('deployment_id', 'in', [chatty.id, quiet.id])
      .orderBy('id')
      .execute();
    const lines = (id: string) => rows.filter((r) => r.deployment_id === id).map((r) => r.line);
    expect(lines(chatty.id)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => line(i)),
      '[slipway] Runtime log cut at 1000 bytes this hour (SLIPWAY_RUNTIME_LOG_LIMIT): lines until 2026-11-22T11:00:00.000Z are not stored; the app goes on.',
      '[slipway] process exited with code 1; restarting in 1s',
      '[slipway] 40 lines of output (3.9 KiB) left out in the hour from 2026-11-22T10:00:00.000Z: over the 1000 bytes an hour limit (SLIPWAY_RUNTIME_LOG_LIMIT)',
      'the next hour',
    ]);
    expect(lines(quiet.id)).toEqual(['another app has its own budget']);
  });
});
