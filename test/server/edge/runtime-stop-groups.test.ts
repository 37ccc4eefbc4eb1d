import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRuntimeSupervisor,
  type RuntimeSupervisor,
} from '../../../server/features/serving/edge/runtime.ts';
import type { SandboxGroup } from '../../../server/platform/sandbox/cgroups.ts';
import { createServiceSandbox, type Sandbox } from '../../../server/platform/sandbox/index.ts';
import type { SandboxRequest, SpawnPlan } from '../../../server/platform/sandbox/spawn.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { appFolder } from '../../helpers/edge.ts';

const APP = `import { createServer } from 'node:http';
createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;

/**
 * A stopped app is gone only once its sandbox's control group is: a service that exits right
 * after stopping its apps (a SIGTERM) must not leave their groups behind. Each group here takes
 * 300 ms more to release than the kernel's, as one whose processes are slow to die does.
 */
describe("edge: stopping apps waits for their sandboxes' control groups", () => {
  let t: TestApp;
  let dir: string;
  let supervisor: RuntimeSupervisor;
  const released: string[] = [];

  /** `group` (or, where sandboxes get none, a stand-in), released 300 ms late. */
  const slow = (group: SandboxGroup | undefined, name: string): SandboxGroup => {
    let end: ReturnType<SandboxGroup['release']> | undefined;
    const base: SandboxGroup = group ?? {
      name,
      dirs: [],
      procs: [],
      setLimits: () => undefined,
      release: () =>
        Promise.resolve({
          oomKills: 0,
          memoryBytes: 0,
          peakBytes: null,
          removed: true,
          forksRefused: 0,
          cpuLowered: null,
        }),
    };
    return Object.assign(Object.create(base) as SandboxGroup, {
      release: () =>
        (end ??= base.release().then(async (e) => {
          await sleep(300);
          released.push(name);
          return e;
        })),
    });
  };

  beforeAll(async () => {
    t = await createTestApp();
    dir = appFolder({ 'server.mjs': APP });
    const real = await createServiceSandbox(t.deps.config);
    let made = 0;
    const sandbox: Sandbox = Object.assign(Object.create(real) as Sandbox, {
      plan: (req: SandboxRequest): SpawnPlan => {
        const plan = real.plan(req);
        return { ...plan, group: slow(plan.group, `app-${++made}`) };
      },
      // No spare: every app starts in a plan of its own, with its slow group.
      spare: undefined,
    });
    supervisor = createRuntimeSupervisor({ sandbox, log: () => undefined });
  });
  afterAll(async () => {
    await supervisor.stopAll();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stop() and stopAll() settle once the groups are released', async () => {
    const spec = { dir, command: [process.execPath, 'server.mjs'], env: {} };
    await supervisor.start('dpl_one', spec);
    await supervisor.start('dpl_two', spec);
    await supervisor.start('dpl_three', spec);
    expect(released).toEqual([]);

    await supervisor.stop('dpl_one');
    expect(released).toEqual(['app-1']);

    await supervisor.stopAll();
    expect([...released].sort()).toEqual(['app-1', 'app-2', 'app-3']);
  }, 30_000);
});
