import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { table } from './lib.ts';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * What `slipway --help` ran before it was compiled ahead of time: tsx, then cli/main.ts with
 * every command's code (each was one module then, loaded up front).
 */
const FROM_SOURCE = `import { readdirSync } from 'node:fs';
import { register } from 'tsx/esm/api';
register();
const { main } = await import('./cli/main.ts');
const { processIo } = await import('./cli/io.ts');
for (const f of readdirSync('cli/run')) await import('./cli/run/' + f);
process.exitCode = await main(process.argv.slice(1), processIo());`;

const CASES: { name: string; args: string[] }[] = [
  { name: 'node -e 0 (baseline)', args: ['-e', '0'] },
  { name: 'slipway --help', args: ['bin/slipway.js', '--help'] },
  { name: 'slipway deploy --help', args: ['bin/slipway.js', 'deploy', '--help'] },
  { name: 'slipway whoami (not logged in)', args: ['bin/slipway.js', 'whoami'] },
  {
    name: 'before: --help through tsx, all loaded',
    args: ['--input-type=module', '-e', FROM_SOURCE, '--help'],
  },
];

/**
 * Wall time and CPU time (user + system) of one run, in milliseconds. CPU time comes from
 * /usr/bin/time (Debian's `time`), and hardly depends on what else the machine runs.
 */
function once(args: string[]): { wall: number; cpu: number } {
  const started = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...args], {
    cwd: ROOT,
    env: { ...process.env, SLIPWAY_CONFIG_DIR: '/nonexistent', SLIPWAY_TOKEN: '', SLIPWAY_API_URL: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  if (r.status !== 0 && !args.includes('whoami'))
    throw new Error(`node ${args.join(' ')} failed: ${r.stderr}`);
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const [, user, system] = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr) ?? [];
  return { wall, cpu: (Number(user) + Number(system)) * 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `npm run bench cli-start`: how long a command takes to start, beside `node -e 0` in the same
 * run. The cases take turns, round after round, so load on the machine falls on all alike; each
 * gets its median wall time.
 */
export async function benchCliStart(rounds = Number(process.env.BENCH_ROUNDS ?? 15)): Promise<string> {
  // The first run builds dist/cli if a source changed: not part of what is measured.
  once(['bin/slipway.js', '--version']);
  const runs = new Map(CASES.map((c) => [c.name, [] as { wall: number; cpu: number }[]]));
  for (let i = 0; i < rounds; i++) {
    for (const c of CASES) runs.get(c.name)!.push(once(c.args));
  }
  const of = (name: string, key: 'wall' | 'cpu') => median(runs.get(name)!.map((r) => r[key]));
  const base = { wall: of(CASES[0]!.name, 'wall'), cpu: of(CASES[0]!.name, 'cpu') };
  return table(
    CASES.map((c) => {
      const wall = of(c.name, 'wall');
      const cpu = of(c.name, 'cpu');
      return {
        command: c.name,
        'wall ms': Math.round(wall),
        'x node -e 0': (wall / base.wall).toFixed(2),
        'CPU ms': Math.round(cpu),
        'CPU over node -e 0': Math.round(cpu - base.cpu),
      };
    }),
  );
}
