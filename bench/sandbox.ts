import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../server/features/builds/run-command.ts';
import { loadConfig } from '../server/platform/config.ts';
import { createRuntimeSupervisor } from '../server/features/serving/edge/runtime.ts';
import { createSandbox, type Sandbox } from '../server/platform/sandbox/index.ts';
import { systemLookup } from '../server/core/ssrf.ts';
import { table } from './lib.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Milliseconds of `fn`, `n` times, taking turns between the cases so that load hits both alike. */
async function turns(cases: Record<string, () => Promise<void>>, n: number): Promise<Record<string, number>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const fn of Object.values(cases)) await fn(); // warm-up
  for (let i = 0; i < n; i++) {
    for (const [name, fn] of Object.entries(cases)) {
      const began = performance.now();
      await fn();
      times[name]!.push(performance.now() - began);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v) * 10) / 10]));
}

const APP = `import { createServer } from 'node:http';
createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT));`;

/**
 * What the sandbox costs: one command (`true`) run directly and in the sandbox, and a server app's
 * cold start (spawn to listening) both ways.
 */
export async function benchSandbox(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-sandbox-'));
  try {
    const make = (mode: string) =>
      createSandbox(loadConfig({ SLIPWAY_DATA_DIR: dir, SLIPWAY_SANDBOX: mode }).sandbox, {
        dataDir: dir,
        workspacesDir: join(dir, 'workspaces'),
        lookup: systemLookup,
      });
    const boxed = await make('bubblewrap');
    if (boxed.unavailable) return `skipped: ${boxed.unavailable}`;
    const direct = await make('off');
    const work = join(dir, 'workspaces', 'bench');
    mkdirSync(work, { recursive: true });
    await boxed.prepare([work]);
    const app = join(dir, 'app');
    mkdirSync(app);
    chmodSync(app, 0o755);
    writeFileSync(join(app, 'server.mjs'), APP);

    const command = (sandbox: Sandbox) => async () => {
      const r = await runCommand({
        argv: ['true'],
        cwd: work,
        env: { PATH: '/usr/bin:/bin' },
        timeoutMs: 10_000,
        sandbox,
        writable: [work],
      });
      if (r.exitCode !== 0) throw new Error(`true exited with ${r.exitCode}`);
    };
    const coldStart = (sandbox: Sandbox) => {
      const supervisor = createRuntimeSupervisor({ sandbox, log: () => undefined });
      let n = 0;
      return async () => {
        const id = `bench-${n++}`;
        await supervisor.start(id, { dir: app, command: [process.execPath, 'server.mjs'], env: {} });
        await supervisor.stop(id);
      };
    };
    const commands = await turns({ direct: command(direct), sandbox: command(boxed) }, 20);
    const starts = await turns({ direct: coldStart(direct), sandbox: coldStart(boxed) }, 10);
    return table([
      {
        case: 'run `true` (median of 20)',
        direct_ms: commands.direct!,
        sandbox_ms: commands.sandbox!,
        added_ms: Math.round((commands.sandbox! - commands.direct!) * 10) / 10,
      },
      {
        case: 'server app cold start (median of 10)',
        direct_ms: starts.direct!,
        sandbox_ms: starts.sandbox!,
        added_ms: Math.round((starts.sandbox! - starts.direct!) * 10) / 10,
      },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
