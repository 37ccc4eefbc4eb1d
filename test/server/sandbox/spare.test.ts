import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/platform/config.ts';
import { findFreePort } from '../../../server/core/free-port.ts';
import {
  createRuntimeSupervisor,
  type RuntimeSupervisor,
} from '../../../server/features/serving/edge/runtime.ts';
import { createSandbox, type Sandbox } from '../../../server/platform/sandbox/index.ts';
import type { ResolvedAddress } from '../../../server/core/ssrf.ts';
import { ownCgroups } from '../../helpers/own-cgroups.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const APP = `import { createServer } from 'node:http';
createServer((req, res) => res.end(process.env.NAME)).listen(Number(process.env.PORT));`;

const get = (port: number) =>
  new Promise<string>((resolve, reject) => {
    request({ host: '127.0.0.1', port, agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });

/**
 * The sandbox a server app starts in when one was made ready ahead (its network up and its rules
 * loaded before the app is known): it must run the app it is given, and must not be used once the
 * rules it loaded are out of date.
 */
describe('a server app sandbox started ahead', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-spare-'));
  // The allow list names a host whose address changes: the rules change with it.
  let address = '10.1.2.3';
  const lookup = async (): Promise<ResolvedAddress[]> => [{ address, family: 4 }];
  let sandbox: Sandbox;
  let supervisor: RuntimeSupervisor;
  let available = false;

  beforeAll(async () => {
    chmodSync(dir, 0o755);
    const app = join(dir, 'app');
    mkdirSync(app);
    chmodSync(app, 0o755);
    writeFileSync(join(app, 'server.mjs'), APP);
    chmodSync(join(app, 'server.mjs'), 0o644);
    const config = loadConfig({ SLIPWAY_DATA_DIR: dir, SLIPWAY_SANDBOX_ALLOW: 'mirror.internal' }).sandbox;
    sandbox = await createSandbox(config, { dataDir: dir, workspacesDir: join(dir, 'workspaces'), lookup });
    available = sandbox.mode === 'bubblewrap' && !sandbox.unavailable;
    supervisor = createRuntimeSupervisor({ sandbox, log: () => undefined });
  });
  afterAll(async () => {
    await supervisor?.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (id: string) =>
    supervisor.start(id, {
      dir: join(dir, 'app'),
      command: [process.execPath, 'server.mjs'],
      env: { NAME: id },
    });

  it('runs the next app, with its own variables, and is made again after each start', async (ctx) => {
    if (!available) ctx.skip();
    await start('first');
    const spare = await waitFor('a sandbox made ready ahead', () => supervisor.sparePort(), 10_000);
    const { port } = await start('second');
    expect(port).toBe(spare);
    expect(await get(port)).toBe('second');
    const next = await waitFor('the next one', () => supervisor.sparePort(), 10_000);
    expect(next).not.toBe(port);
  });

  it('is not used once the network rules changed, and is stopped with the apps, groups and all', async (ctx) => {
    if (!available) ctx.skip();
    const spare = await waitFor('a sandbox made ready ahead', () => supervisor.sparePort(), 10_000);
    const before = sandbox.spare!.generation();
    address = '10.9.8.7';
    await sandbox.refresh();
    expect(sandbox.spare!.generation()).toBe(before + 1);
    const { port } = await start('third');
    expect(port).not.toBe(spare);
    expect(await get(port)).toBe('third');
    // The stale one is gone: its port is free again (pasta held it).
    const free = (port: number) =>
      findFreePort([port, port]).then(
        () => true,
        () => false,
      );
    await waitFor('the stale sandbox to end', () => free(spare));

    const ready = await waitFor('a sandbox made ready ahead', () => supervisor.sparePort(), 10_000);
    const groups = ownCgroups(sandbox.cgroups.parents);
    if (sandbox.cgroups.version !== null) expect(groups.length).toBeGreaterThan(0);
    await supervisor.stopAll();
    expect(supervisor.sparePort()).toBeUndefined();
    // Stopped means gone: the apps' and the spare's control groups too, none left for the next start.
    expect(ownCgroups(sandbox.cgroups.parents)).toEqual([]);
    await waitFor('the sandbox made ahead to end', () => free(ready));
  });
});
