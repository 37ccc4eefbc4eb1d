import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisorState } from '../../../server/features/serving/edge/runtime/state.ts';
import { supervisorOf } from '../../../server/features/serving/edge/runtime/supervisor.ts';
import type { RuntimeSupervisor } from '../../../server/features/serving/edge/runtime.ts';
import { createServiceSandbox, type Sandbox } from '../../../server/platform/sandbox/index.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { appFolder } from '../../helpers/edge.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** A server app that listens a second and a half after it starts. */
const LATE_APP = `
import { createServer } from 'node:http';
setTimeout(() => {
  createServer((req, res) => res.end('late')).listen(Number(process.env.PORT), '127.0.0.1');
}, 1500);
`;

/**
 * On a loaded machine the edge's own look from outside (every half second) can see an app listen
 * before the sandbox's watch says so. The watch must still get to say it: the app's connection
 * helper starts only then, and without it every request of the app's life goes through pasta.
 */
describe("edge: an app's connection helper when a look from outside saw the app listen first", () => {
  let t: TestApp;
  let dir: string;
  let supervisor: RuntimeSupervisor;
  let looks = 0;
  let available = false;

  beforeAll(async () => {
    t = await createTestApp();
    dir = appFolder({ 'server.mjs': LATE_APP });
    const real = await createServiceSandbox(t.deps.config);
    available = real.mode === 'bubblewrap' && !real.unavailable;
    if (!available)
      process.stderr.write('NOTICE: the late-watch test is skipped: the sandbox cannot run here.\n');
    // The look from outside answers first: yes, before the app listens (the watch then lags it
    // by a second, as a held-back shell would).
    const sandbox: Sandbox = Object.assign(Object.create(real) as Sandbox, {
      isListening: () => {
        looks++;
        return Promise.resolve(true);
      },
    });
    supervisor = supervisorOf(
      createSupervisorState({ sandbox, log: () => undefined, startTimeoutMs: 10_000 }),
    );
  });
  afterAll(async () => {
    await supervisor.stopAll();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('still starts the helper once the late watch says the app listens', async (ctx) => {
    if (!available) ctx.skip();
    const { port } = await supervisor.start('dpl_late_watch', {
      dir,
      command: [process.execPath, 'server.mjs'],
      env: {},
    });
    // The look answered: the start is reported before the app listens.
    expect(looks).toBeGreaterThan(0);
    expect(supervisor.canConnect(port)).toBe(false);
    await waitFor('the connection helper', () => supervisor.canConnect(port), 10_000);
    const body = await new Promise<string>((resolve, reject) => {
      const opened = supervisor.openConnection(port, (socket) => {
        if (!socket) return reject(new Error('the helper opened no connection'));
        let text = '';
        socket.setEncoding('latin1');
        socket.on('data', (c: string) => (text += c));
        socket.on('end', () => resolve(text));
        socket.resume();
        socket.end('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
      });
      if (!opened) reject(new Error('no helper ready'));
    });
    expect(body).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nlate$/);
  }, 30_000);
});
