import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';
import { createSandbox, type Sandbox } from '../../server/platform/sandbox/index.ts';
import { spawnPlanned } from '../../server/platform/sandbox/spawn-planned.ts';
import { systemLookup } from '../../server/core/ssrf.ts';
import { hostProcesses } from '../helpers/host-processes.ts';
import { waitFor } from '../helpers/wait-for.ts';

const LIMIT = 64;
const dir = mkdtempSync(join(tmpdir(), 'slipway-nproc-'));
let sandbox: Sandbox;
let unavailable: string | null = null;

beforeAll(async () => {
  const config = loadConfig({ SLIPWAY_DATA_DIR: dir, SLIPWAY_SANDBOX_PROCESSES: String(LIMIT) });
  sandbox = await createSandbox(config.sandbox, {
    dataDir: dir,
    workspacesDir: join(dir, 'w'),
    lookup: systemLookup,
  });
  unavailable = sandbox.unavailable;
  if (unavailable) process.stderr.write(`NOTICE: the process limit attack is skipped: ${unavailable}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `script` in a sandbox; resolves with its exit code and output. */
function run(script: string, network: boolean) {
  const child = spawnPlanned(
    sandbox.plan({
      argv: ['sh', '-c', script],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      writable: [],
      readOnly: [],
      network,
    }),
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, out })),
  );
  return { child, done, out: () => out };
}

/**
 * Every sandbox runs as the same host user. A tenant that fills its own process limit must not
 * take another tenant's: a local repository's checkout (a sandbox without network) once counted
 * every process of that user, and failed with "Resource temporarily unavailable" next to a busy
 * neighbour.
 */
describe('process limits are each sandbox’s own', { timeout: 60_000 }, () => {
  for (const [attacker, victim] of [
    [true, false],
    [false, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`a neighbour at its limit (${attacker ? 'a build' : 'a checkout'}) leaves ${victim ? 'a build' : 'a checkout'} its own`, async (ctx) => {
      if (unavailable) ctx.skip();
      // A duration unique to this test, so that its sleeps can be found on the host.
      const marker = `60.${String(Math.random()).slice(2, 12)}`;
      // The neighbour: as many processes as its limit allows (a shell, its sleeps and the sandbox's own).
      const hog = run(
        `for i in $(seq ${LIMIT - 6}); do sleep ${marker} & done; echo started; wait`,
        attacker,
      );
      try {
        await waitFor(
          'the neighbour’s processes',
          () => hog.out().includes('started') && hostProcesses(marker).length >= LIMIT - 6,
          20_000,
        );
        // The victim forks a few processes of its own, as git and a build do.
        const victimRun = run('for i in 1 2 3 4 5 6 7 8; do true & done; wait; echo done', victim);
        const { code, out } = await victimRun.done;
        expect(out).not.toMatch(/Resource temporarily unavailable|Cannot fork|EAGAIN/i);
        expect({ code, out: out.trim() }).toEqual({ code: 0, out: 'done' });
      } finally {
        try {
          process.kill(-hog.child.pid!, 'SIGKILL');
        } catch {
          // Gone.
        }
        await hog.done;
      }
      await waitFor('the neighbour’s processes to end', () => hostProcesses(marker).length === 0);
    });
  }
});
