import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRuntimeSupervisor,
  type RuntimeSupervisor,
} from '../../server/features/serving/edge/runtime.ts';
import type { Sandbox } from '../../server/platform/sandbox/index.ts';
import { appFolder } from '../helpers/edge.ts';
import { ownCgroups } from '../helpers/own-cgroups.ts';
import { testSandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * A stop waits until the app's control group is released (so that a stopping service leaves no
 * group behind). A hostile app tries to turn that wait into a hang: it ignores SIGTERM and, on
 * it, forks detached processes in a loop that ignore signals too, so that its group never seems
 * to empty. The stop must still end within the SIGKILL grace and a little, leaving no group and
 * no process, and the next app must start as usual.
 */
const HOSTILE = `
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
const forker = "trap '' TERM HUP INT; while :; do (trap '' TERM HUP INT; sleep 1000) & done";
process.on('SIGTERM', () => {
  for (let i = 0; i < 4; i++) spawn('sh', ['-c', forker], { detached: true, stdio: 'ignore' }).unref();
});
createServer((req, res) => res.end('hostile')).listen(Number(process.env.PORT), '127.0.0.1');
`;
const HONEST = `import { createServer } from 'node:http';
createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;

/** The groups of this process that are not the spare sandbox's (which a stop leaves be). */
const appGroups = () => {
  const all = ownCgroups(sandbox.cgroups.parents);
  const spares = new Set(all.filter((p) => p.includes('/spare/')).map((p) => basename(p)));
  return all.filter((p) => !spares.has(basename(p)));
};

/** Processes running the hostile app's `sleep 1000`, anywhere on the machine. */
const sleepers = () =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\u00001000\u0000';
      } catch {
        return false;
      }
    });

const sandbox: Sandbox = await testSandbox();
const available = sandbox.mode === 'bubblewrap' && !sandbox.unavailable;
if (!available)
  process.stderr.write('NOTICE: test/security/app-stop skipped: the sandbox cannot run here.\n');

describe.skipIf(!available)('an app that forks on SIGTERM to keep its group from emptying', () => {
  let dir: string;
  let supervisor: RuntimeSupervisor;
  beforeAll(() => {
    dir = appFolder({ 'hostile.mjs': HOSTILE, 'honest.mjs': HONEST });
    supervisor = createRuntimeSupervisor({ sandbox, log: () => undefined, stopTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await supervisor.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is stopped within the grace, leaving no group and no process; the next app starts', async () => {
    const share = { plan: 'free' as const, memoryBytes: 512 * 1024 ** 2, cpu: 1 };
    await supervisor.start('dpl_hostile', {
      dir,
      command: [process.execPath, 'hostile.mjs'],
      env: {},
      share,
    });
    if (sandbox.cgroups.version !== null) expect(appGroups().length).toBeGreaterThan(0);
    const began = performance.now();
    const stopped = supervisor.stop('dpl_hostile');
    // The attack is under way: its forks run during the grace.
    await waitFor('the forks on SIGTERM', () => sleepers().length > 0, 5000);
    await stopped;
    const ms = performance.now() - began;
    // The SIGKILL after the 1 s grace ends the sandbox's PID namespace, forks and all.
    expect(ms).toBeLessThan(10_000);
    expect(appGroups()).toEqual([]);
    expect(sleepers()).toEqual([]);
    const { port } = await supervisor.start('dpl_honest', {
      dir,
      command: [process.execPath, 'honest.mjs'],
      env: {},
    });
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
  }, 60_000);
});
