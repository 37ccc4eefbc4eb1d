import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { table } from './lib.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist', 'action');
const RUNS = Number(process.env.BENCH_ACTION_RUNS ?? 15);
/** The target: the action's first request at most this much later than `node -e 0` ends. */
const TARGET_MS = 150;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} kB`;

/**
 * Preloaded into a child (`--import`): writes the child's own CPU time, user and system in µs,
 * to CPU_OUT when it exits (the action ends with process.exit(), which still fires 'exit').
 */
const CPU_HOOK = `data:text/javascript,${encodeURIComponent(
  "import{writeFileSync as w}from'node:fs';process.on('exit',()=>{const c=process.cpuUsage();w(process.env.CPU_OUT,c.user+' '+c.system)})",
)}`;

/** Runs `node args`, answering the time from spawn to `until` (the child's exit, or an earlier mark). */
function timeChild(args: string[], env: NodeJS.ProcessEnv, firstRequest?: Promise<number>): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: 'ignore' });
  const exited = new Promise<number>((resolve) => child.on('close', () => resolve(performance.now())));
  return (firstRequest ? Promise.race([firstRequest, exited]) : exited).then(async (at) => {
    await exited;
    return at - started;
  });
}

/**
 * The GitHub Action's costs: the bundle's size, how long a workflow step waits from the
 * process's start until the action's first request reaches the Slipway API, beside the time
 * `node -e 0` takes to start and exit, measured in the same run (medians of interleaved runs),
 * and the CPU time of a run to its exit (the chunks it loads after that request included).
 */
export async function benchAction(): Promise<string> {
  if (!existsSync(join(DIST, 'index.js')))
    execFileSync('npm', ['run', '--silent', 'bundle'], { cwd: ROOT, stdio: 'inherit' });
  const files = readdirSync(DIST).filter((f) => f.endsWith('.js'));
  const sizes = Object.fromEntries(files.map((f) => [f, statSync(join(DIST, f)).size]));
  // @actions/core's chunk, told apart by the prefix of its GITHUB_OUTPUT delimiters.
  const when = (f: string) =>
    f === 'index.js'
      ? 'loaded at start'
      : readFileSync(join(DIST, f), 'utf8').includes('ghadelimiter_')
        ? '@actions/core, loaded once the first request is sent'
        : 'loaded for GitHub calls';
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);

  let onRequest: ((at: number) => void) | undefined;
  // Answers 401 at once, so the action stops right after its first request.
  const server = createServer((req, res) => {
    onRequest?.(performance.now());
    onRequest = undefined;
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ success: false, error: { code: 'UNAUTHORIZED', message: 'bench' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-action-'));
  writeFileSync(join(dir, 'output'), '');
  writeFileSync(join(dir, 'summary'), '');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GITHUB_OUTPUT: join(dir, 'output'),
    GITHUB_STEP_SUMMARY: join(dir, 'summary'),
    GITHUB_EVENT_NAME: 'push',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567',
    GITHUB_RUN_ID: '1',
    'INPUT_API-URL': apiUrl,
    'INPUT_API-TOKEN': 'slw_bench',
    INPUT_PROJECT: 'prj_0123456789abcdefghij',
  };

  const baseline: number[] = [];
  const action: number[] = [];
  // The CPU a run costs up to its exit, chunks loaded after the first request included; from
  // runs of their own, so that the hook does not count in the start-up times above.
  const cpuUser: number[] = [];
  const cpuTotal: number[] = [];
  const cpuOut = join(dir, 'cpu');
  try {
    for (let i = 0; i < RUNS; i++) {
      baseline.push(await timeChild(['-e', '0'], { PATH: process.env.PATH }));
      const first = new Promise<number>((resolve) => (onRequest = resolve));
      action.push(await timeChild([join(DIST, 'index.js')], env, first));
      await timeChild(['--import', CPU_HOOK, join(DIST, 'index.js')], { ...env, CPU_OUT: cpuOut });
      const [user, system] = readFileSync(cpuOut, 'utf8').split(' ').map(Number) as [number, number];
      cpuUser.push(user / 1000);
      cpuTotal.push((user + system) / 1000);
    }
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const extra = median(action) - median(baseline);
  // The fastest runs show the cost with the least interference from whatever else the machine runs.
  const best = Math.min(...action) - Math.min(...baseline);
  return table([
    ...files.map((f) => ({
      measure: `bundle ${f} (${when(f)})`,
      value: kb(sizes[f]!),
    })),
    { measure: 'bundle total', value: kb(total) },
    {
      measure: `node -e 0, start to exit (median / fastest of ${RUNS})`,
      value: `${median(baseline).toFixed(0)} / ${Math.min(...baseline).toFixed(0)} ms`,
    },
    {
      measure: `action, start to first API request (median / fastest of ${RUNS})`,
      value: `${median(action).toFixed(0)} / ${Math.min(...action).toFixed(0)} ms`,
    },
    {
      measure: `action minus node -e 0, medians (target < ${TARGET_MS} ms)`,
      value: `${extra.toFixed(0)} ms ${extra < TARGET_MS ? 'ok' : 'OVER TARGET'}`,
    },
    { measure: 'action minus node -e 0, fastest runs', value: `${best.toFixed(0)} ms` },
    {
      measure: `action, CPU to exit, user / user+system (median of ${RUNS})`,
      value: `${median(cpuUser).toFixed(0)} / ${median(cpuTotal).toFixed(0)} ms`,
    },
  ]);
}
