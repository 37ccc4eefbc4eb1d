import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSupervisorState,
  type SupervisorState,
} from '../../../server/features/serving/edge/runtime/state.ts';
import { supervisorOf } from '../../../server/features/serving/edge/runtime/supervisor.ts';
import type { RuntimeSupervisor } from '../../../server/features/serving/edge/runtime.ts';
import { createServiceSandbox } from '../../../server/platform/sandbox/index.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** A server app that exits when asked /crash. */
const APP = `
import { createServer } from 'node:http';
createServer((req, res) => {
  if (req.url === '/crash') process.exit(1);
  res.end('ok');
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** Listens on 127.0.0.1:port, or null when something holds it. */
const hold = (port: number) =>
  new Promise<Server | null>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });

/** Asks the app on `port` for /crash; the connection then drops. */
const crash = (port: number) =>
  new Promise<void>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/crash', agent: false }, (res) => {
      res.resume();
      resolve();
    });
    req.on('error', () => resolve());
    req.end();
  });

describe("edge: the supervisor's index of running apps by port", () => {
  let t: TestApp;
  let dir: string;
  let st: SupervisorState;
  let supervisor: RuntimeSupervisor;
  const spec = () => ({ dir, command: [process.execPath, 'server.mjs'], env: {} });
  const indexed = () => [...st.byPort].map(([port, s]) => [port, s.id]).sort();

  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'slipway-port-index-'));
    // The app runs as the sandbox's user, who must be able to read its files.
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'server.mjs'), APP);
    st = createSupervisorState({
      sandbox: await createServiceSandbox(t.deps.config),
      log: () => undefined,
      // Time enough, after a crash, to take the app's port before its restart.
      backoff: { initialMs: 3000, maxMs: 3000 },
      startTimeoutMs: 10_000,
    });
    supervisor = supervisorOf(st);
  });
  afterAll(async () => {
    await supervisor.stopAll();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows a port change on restart and drops the port on stop', async () => {
    const { port: first } = await supervisor.start('dpl_index', spec());
    const { port: other } = await supervisor.start('dpl_index_other', spec());
    expect(indexed()).toEqual(
      [
        [first, 'dpl_index'],
        [other, 'dpl_index_other'],
      ].sort(),
    );
    await waitFor('the connection helper', () => supervisor.canConnect(first));

    await crash(first);
    await waitFor('the restart', () => supervisor.status('dpl_index')?.state === 'restarting');
    // A crashed app is not running: no connection is opened to its port.
    expect(indexed()).toEqual([[other, 'dpl_index_other']]);
    expect(supervisor.canConnect(first)).toBe(false);
    // Its port taken meanwhile, the restart moves it to another.
    const holder = await waitFor('the crashed app to free its port', () => hold(first), 2500);
    try {
      await waitFor('the app running again', () => supervisor.status('dpl_index')?.state === 'running');
      const second = supervisor.portOf('dpl_index')!;
      expect(second).not.toBe(first);
      expect(supervisor.status('dpl_index')).toMatchObject({ port: second, restarts: 1 });
      expect(indexed()).toEqual(
        [
          [second, 'dpl_index'],
          [other, 'dpl_index_other'],
        ].sort(),
      );
      await waitFor('the connection helper on the new port', () => supervisor.canConnect(second));
      expect(supervisor.canConnect(first)).toBe(false);

      await supervisor.stop('dpl_index');
      expect(indexed()).toEqual([[other, 'dpl_index_other']]);
      expect(supervisor.canConnect(second)).toBe(false);
      expect(supervisor.openConnection(second, () => undefined)).toBe(false);
      // The other app's entry is its own: still there, still reachable.
      await waitFor('the other app reachable', () => supervisor.canConnect(other));
    } finally {
      await new Promise((r) => holder.close(r));
    }
  }, 60_000);
});
