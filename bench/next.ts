import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type SlipwayClient } from '../api/client/index.ts';
import { findFreePort } from '../server/core/free-port.ts';
import { descendants } from '../server/platform/sandbox/processes.ts';
import { startNginxProxy } from './edge-app.ts';
import { alternate, pairedRatio, processCpuUs, table, type LoadCase } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  apiUrl: string;
  edgeUrl: string;
  token: string;
  projectId: string;
  deploymentId: string;
  host: string;
  repoDir: string;
  commit: string;
  firstBuildMs: number;
  controlUrl: string;
}

const ROUNDS = 5;
const NGINX_CASE = 'nginx proxy, standalone bare';
const TTFB_REQUESTS = 200;
const REBUILD_ROUNDS = 3;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length / 2;
  return s.length % 2 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

/** The environment of the bare commands: the host's, without npm settings of a surrounding `npm run`. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('npm_')) env[k] = v;
  return { ...env, NEXT_TELEMETRY_DISABLED: '1', CI: '1', ...extra };
}

/** Runs a command and returns how long it took (ms); its output is shown only when it fails. */
function timed(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  try {
    execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${String(e.stdout)}\n${String(e.stderr)}`, {
      cause: err,
    });
  }
  return performance.now() - t0;
}

/** One GET; resolves with its status and body, rejects when it cannot connect. */
function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: host ? { host } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Time to first byte of `n` GETs one after another on one kept connection (ms, sorted): from
 * sending the request to its status line and headers, the first bytes of the answer. The body
 * is read to its end before the next request.
 */
async function ttfb(url: string, host: string | undefined, n: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      out.push(
        await new Promise<number>((resolve, reject) => {
          const t0 = performance.now();
          const req = request(url, { agent, headers: host ? { host } : {} }, (res) => {
            const first = performance.now() - t0;
            if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
            res.resume();
            res.on('end', () => resolve(first));
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end();
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return out.sort((a, b) => a - b);
}

/** The value /now renders; a different one each request when it renders per request. */
const rendered = (html: string) => /id="now">(rendered-[^<]+)</.exec(html)?.[1] ?? null;

/** Asks `url` until it answers 200, and checks that it renders per request. */
async function waitRendering(name: string, url: string, host?: string) {
  for (let i = 0; ; i++) {
    const res = await get(url, host).catch(() => null);
    if (res?.status === 200) break;
    if (i > 1200) throw new Error(`${name} did not answer (last: ${res?.status ?? 'no connection'})`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const [a, b] = [await get(url, host), await get(url, host)];
  if (!rendered(a.body) || rendered(a.body) === rendered(b.body))
    throw new Error(`${name} does not render /now per request: ${a.body.slice(0, 300)}`);
}

/** A server started bare on the host, in a process group of its own. */
function startServer(argv: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: 'ignore', detached: true });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    /** CPU of the server and its children (µs). */
    cpu: () => {
      if (!child.pid) return undefined;
      let sum = 0;
      for (const pid of [child.pid, ...descendants(child.pid)]) sum += processCpuUs(pid)() ?? 0;
      return sum;
    },
    stop: async () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
      await exited;
    },
  };
}

/** Sums the CPU time (µs) of the processes `pids()` names when read. */
function cpuOf(pids: () => number[]): () => number | undefined {
  return () => pids().reduce((sum, pid) => sum + (processCpuUs(pid)() ?? 0), 0);
}

/**
 * The bare copy: the deployed commit cloned to a temporary folder, `npm ci`, then `next build`
 * twice: with NEXT_PRIVATE_STANDALONE=1 (as Slipway builds it; its `.next/standalone` moved out
 * beside `.next/static` and `public/`, as Next.js documents for self-hosting), then plain `npm run
 * build` for `next start`. Returns the folders and the times.
 */
function bareCopy(repoDir: string, root: string) {
  const dir = join(root, 'bare');
  execFileSync('git', ['clone', '-q', repoDir, dir]);
  const ciMs = timed('npm', ['ci', '--no-audit', '--no-fund'], dir, bareEnv());
  const standaloneBuildMs = timed('npm', ['run', 'build'], dir, bareEnv({ NEXT_PRIVATE_STANDALONE: '1' }));
  const standalone = join(root, 'standalone');
  cpSync(join(dir, '.next', 'standalone'), standalone, { recursive: true, verbatimSymlinks: true });
  cpSync(join(dir, '.next', 'static'), join(standalone, '.next', 'static'), { recursive: true });
  if (existsSync(join(dir, 'public')))
    cpSync(join(dir, 'public'), join(standalone, 'public'), { recursive: true });
  const buildMs = timed('npm', ['run', 'build'], dir, bareEnv());
  return { dir, standalone, ciMs, standaloneBuildMs, buildMs };
}

/**
 * Server-side rendering of a Next.js page, in one run: the create-next-app starter with a page
 * rendered per request (`/now`), deployed through the whole service (the edge in front, the app
 * in its sandbox, Next.js's standalone output as Slipway builds it), against the same commit
 * built on the host with `npm ci && npm run build` and run bare with `next start` (what the goal
 * is read against), and its standalone `server.js` run bare (the very server Slipway runs:
 * the difference to it is the edge's and the sandbox's alone), and, with nginx installed, nginx
 * streaming (`proxy_buffering off`) in front of that bare server.js: what any proxy costs here.
 * Throughput with 10 connections
 * (`alternate`: the cases take turns, paired ratios), then time to first byte of one request at
 * a time on a kept connection, in alternating rounds. Goals: >= 80% of `next start`'s
 * throughput through the edge, TTFB p50 <= 1.1 x.
 */
export async function benchNextSsr(seconds: number): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'slipway-bench-next-'));
  const { info, pid: edgePid, stop } = await spawnBenchServer<Info>('bench/next-server.ts');
  const servers: ReturnType<typeof startServer>[] = [];
  let nginx: Awaited<ReturnType<typeof startNginxProxy>> = null;
  try {
    const copy = bareCopy(info.repoDir, root);
    const nextStartPort = await findFreePort();
    const nextStart = startServer(
      [
        process.execPath,
        join(copy.dir, 'node_modules', 'next', 'dist', 'bin', 'next'),
        'start',
        '-H',
        '127.0.0.1',
        '-p',
        String(nextStartPort),
      ],
      copy.dir,
      bareEnv({ NODE_ENV: 'production' }),
    );
    servers.push(nextStart);
    const standalonePort = await findFreePort();
    const standalone = startServer(
      [process.execPath, 'server.js'],
      copy.standalone,
      bareEnv({ NODE_ENV: 'production', PORT: String(standalonePort), HOSTNAME: '127.0.0.1' }),
    );
    servers.push(standalone);
    const urls = {
      nextStart: `http://127.0.0.1:${nextStartPort}/now`,
      standalone: `http://127.0.0.1:${standalonePort}/now`,
      edge: `${info.edgeUrl}/now`,
    };
    await waitRendering('next start', urls.nextStart);
    await waitRendering('the standalone server.js', urls.standalone);
    await waitRendering('the deployment through the edge', urls.edge, info.host);
    // What any proxy in front of the same server costs here: nginx streaming as the edge does.
    nginx = await startNginxProxy(standalonePort, 'proxy_buffering off;', '/now');

    const appPids = async () => {
      const res = await get(`${info.controlUrl}/app`);
      return (JSON.parse(res.body) as { pids: number[] }).pids;
    };
    const sandboxPids = await appPids();
    const edgeCpu = processCpuUs(edgePid);
    const sandboxCpu = cpuOf(() => sandboxPids);
    const split = { edge: 0, sandbox: 0 };
    let last: { edge: number; sandbox: number } | null = null;
    const edgeCase = () => {
      const now = { edge: edgeCpu() ?? 0, sandbox: sandboxCpu() ?? 0 };
      if (last) {
        split.edge += now.edge - last.edge;
        split.sandbox += now.sandbox - last.sandbox;
        last = null;
      } else {
        last = now;
      }
      return now.edge + now.sandbox;
    };
    const cases: LoadCase[] = [
      { name: 'next start, bare', url: urls.nextStart, cpu: nextStart.cpu },
      { name: 'standalone server.js, bare', url: urls.standalone, cpu: standalone.cpu },
      {
        name: 'through the edge (standalone, sandbox)',
        url: urls.edge,
        opts: { headers: { host: info.host } },
        cpu: edgeCase,
      },
    ];
    if (nginx) {
      const nginxCpu = processCpuUs(nginx.pid);
      cases.push({
        name: NGINX_CASE,
        url: `${nginx.url}now`,
        cpu: () => (standalone.cpu() ?? 0) + (nginxCpu() ?? 0),
      });
    }
    const results = await alternate(cases, { seconds, rounds: ROUNDS });
    const base = results.get('next start, bare')!;
    const edge = results.get('through the edge (standalone, sandbox)')!;
    const standaloneResult = results.get('standalone server.js, bare')!;

    // TTFB, one request at a time, the cases taking turns; a warm-up of 20 each first.
    const ttfbCases = [
      { name: 'next start, bare', url: urls.nextStart, host: undefined },
      { name: 'standalone server.js, bare', url: urls.standalone, host: undefined },
      { name: 'through the edge (standalone, sandbox)', url: urls.edge, host: info.host },
      ...(nginx ? [{ name: NGINX_CASE, url: `${nginx.url}now`, host: undefined }] : []),
    ];
    for (const c of ttfbCases) await ttfb(c.url, c.host, 20);
    const ttfbRounds = new Map<string, number[]>(ttfbCases.map((c) => [c.name, []]));
    for (let i = 0; i < ROUNDS; i++) {
      for (const c of ttfbCases)
        ttfbRounds.get(c.name)!.push(median(await ttfb(c.url, c.host, TTFB_REQUESTS)));
    }
    const ttfbRatio = (name: string, of: string) =>
      round2(median(ttfbRounds.get(name)!.map((ms, i) => ms / ttfbRounds.get(of)![i]!)));

    const rows = [...results].map(([name, r]) => ({
      case: name,
      rps: r.rps,
      rounds: r.rounds.join(' '),
      p50_ms: r.p50,
      p99_ms: r.p99,
      pct_of_next_start: pairedRatio(r, base),
      server_cpu_us_per_req: r.cpuUs ?? '-',
      ttfb_p50_ms: round2(median(ttfbRounds.get(name)!)),
      ttfb_x_next_start: ttfbRatio(name, 'next start, bare'),
      non2xx: r.non2xx,
      errors: r.errors,
    }));
    const through = pairedRatio(edge, base);
    const ttfbX = ttfbRatio('through the edge (standalone, sandbox)', 'next start, bare');
    const edgeShare = Math.round((split.edge / (split.edge + split.sandbox || 1)) * 100);
    return [
      `Next.js SSR page (create-next-app starter + /now rendered per request), median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections;`,
      `TTFB: median per round of ${TTFB_REQUESTS} sequential requests on one kept connection, median of the ${ROUNDS} rounds' ratios`,
      `Bare copy: npm ci ${Math.round(copy.ciMs)} ms, standalone build ${Math.round(copy.standaloneBuildMs)} ms, plain build ${Math.round(copy.buildMs)} ms; Slipway's first build, POST -> live ${info.firstBuildMs} ms`,
      table(rows),
      `Through the edge, server CPU: edge ${edgeShare}%, sandbox (next server.js, helper, pasta) ${100 - edgeShare}%`,
      `Through the edge against the standalone server.js bare (the same server, without edge and sandbox): ${pairedRatio(edge, standaloneResult)}% throughput, TTFB ${ttfbRatio('through the edge (standalone, sandbox)', 'standalone server.js, bare')} x`,
      ...(nginx
        ? [
            `nginx in front of the standalone server.js bare (proxy_buffering off): ${pairedRatio(results.get(NGINX_CASE)!, standaloneResult)}% of its throughput, TTFB ${ttfbRatio(NGINX_CASE, 'standalone server.js, bare')} x`,
          ]
        : []),
      `Target: throughput >= 80% of next start through the edge -> ${through}%: ${through >= 80 ? 'met' : 'NOT met'}`,
      `Target: TTFB p50 <= 1.1 x next start -> ${ttfbX} x: ${ttfbX <= 1.1 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await Promise.all([stop(), ...servers.map((s) => s.stop()), nginx?.stop()]);
    rmSync(root, { recursive: true, force: true });
  }
}

/** "12.3s" / "340ms" of a build log line, in ms. */
const elapsedOf = (text: string | undefined) => {
  const m = /([\d.]+)(ms|s)\b/.exec(text ?? '');
  return m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : NaN;
};

/**
 * POST a deployment of the same commit and follow its log to the end, each line stamped with
 * when it arrived (ms after the POST): POST -> live, the log's own durations, and the phases.
 */
async function rebuild(api: SlipwayClient, info: Info) {
  const t0 = performance.now();
  const d = await api.deployments.create(info.projectId, { target: 'production', branch: 'main' });
  const lines: { at: number; text: string }[] = [];
  for await (const text of api.deployments.followLogs(d.id)) lines.push({ at: performance.now() - t0, text });
  const liveMs = performance.now() - t0;
  const done = await api.deployments.get(d.id);
  if (done.status !== 'live')
    throw new Error(`bench build ${d.id} ${done.status}: ${lines.map((l) => l.text).join('\n')}`);
  if (done.commitHash !== info.commit) throw new Error(`built ${done.commitHash}, not ${info.commit}`);
  // The cache is saved after live: as a later push would, wait for it before the next build.
  let logs = '';
  for (let i = 0; i < 1200; i++) {
    ({ logs } = await api.deployments.logs(d.id, { tail: 2000 }));
    if (/Build cache: (saved|not saved)/.test(logs)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const find = (re: RegExp) => logs.split('\n').find((l) => re.test(l));
  return {
    liveMs,
    buildingMs: elapsedOf(find(/^Building finished in /)),
    completedMs: elapsedOf(find(/^==> Build completed in /)),
    cacheLine: find(/^Build cache: (hit|partial hit|miss)/) ?? '(no cache line)',
    savedLine: find(/^Build cache: (saved|not saved)/) ?? '(no save line)',
    phases: lines.filter((l) => l.text.startsWith('==> ') || l.text.startsWith('Build cache:')),
  };
}

/**
 * A Next.js rebuild through Slipway with its build cache, in one run: the create-next-app
 * starter (+ /now) deployed once (the cache saved), then the same commit again: `Build cache:
 * hit` (node_modules restored as links, `.next/cache` as a copy, no install), the build with
 * NEXT_PRIVATE_STANDALONE=1 and the output stored. Against `next build` alone on the host in a
 * clone of the same commit after one build (`.next/cache` warm): plain `npm run build`, the goal's
 * baseline, and with NEXT_PRIVATE_STANDALONE=1 as Slipway runs it. The cases take turns for
 * REBUILD_ROUNDS rounds. Goal: Slipway's build (POST -> live) <= 1.2 x the plain `next build`,
 * read as the median of each round's ratio.
 */
export async function benchNextRebuild(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'slipway-bench-next-'));
  const { info, stop } = await spawnBenchServer<Info>('bench/next-server.ts');
  try {
    const api = createClient({ baseUrl: info.apiUrl, token: info.token });
    const copy = bareCopy(info.repoDir, root);
    const plain: number[] = [];
    const standalone: number[] = [];
    const runs: Awaited<ReturnType<typeof rebuild>>[] = [];
    for (let i = 0; i < REBUILD_ROUNDS; i++) {
      plain.push(timed('npm', ['run', 'build'], copy.dir, bareEnv()));
      standalone.push(timed('npm', ['run', 'build'], copy.dir, bareEnv({ NEXT_PRIVATE_STANDALONE: '1' })));
      runs.push(await rebuild(api, info));
    }
    const live = median(runs.map((r) => r.liveMs));
    const building = median(runs.map((r) => r.buildingMs));
    const completed = median(runs.map((r) => r.completedMs));
    const [p, s] = [median(plain), median(standalone)];
    const mid = runs.find((r) => r.liveMs === live) ?? runs[0]!;
    // Each round's Slipway build against the bare builds of the same round: load on the machine
    // that comes and goes falls on both.
    const ratio = median(runs.map((r, i) => r.liveMs / plain[i]!));
    return [
      `Next.js rebuild (create-next-app starter + /now, same commit), median of ${REBUILD_ROUNDS} alternating rounds`,
      `Bare copy first: npm ci ${Math.round(copy.ciMs)} ms, first builds ${Math.round(copy.standaloneBuildMs)} ms (standalone) and ${Math.round(copy.buildMs)} ms (plain); Slipway's first build, POST -> live ${info.firstBuildMs} ms`,
      table([
        {
          case: 'next build (npm run build), warm .next/cache',
          median_ms: Math.round(p),
          runs_ms: plain.map(Math.round).join(' '),
        },
        {
          case: 'the same with NEXT_PRIVATE_STANDALONE=1',
          median_ms: Math.round(s),
          runs_ms: standalone.map(Math.round).join(' '),
        },
        {
          case: 'Slipway: "Building finished in" (npm run build in the sandbox)',
          median_ms: Math.round(building),
          runs_ms: runs.map((r) => Math.round(r.buildingMs)).join(' '),
        },
        {
          case: 'Slipway: "Build completed in" (clone to output stored)',
          median_ms: Math.round(completed),
          runs_ms: runs.map((r) => Math.round(r.completedMs)).join(' '),
        },
        {
          case: 'Slipway: POST -> live (cache hit)',
          median_ms: Math.round(live),
          runs_ms: runs.map((r) => Math.round(r.liveMs)).join(' '),
        },
      ]),
      `Cache lines: ${mid.cacheLine} | ${mid.savedLine}`,
      `Phases of the median run (ms after the POST): ${mid.phases.map((l) => `${Math.round(l.at)} ${l.text}`).join(' | ')}`,
      `Slipway's "Building" step: ${round2(building / p)} x next build, ${round2(building / s)} x the standalone build; whole build ${round2(completed / p)} x`,
      `Target: Slipway's rebuild (POST -> live) <= 1.2 x next build (median of the rounds' ratios: ${runs.map((r, i) => round2(r.liveMs / plain[i]!)).join(', ')}) -> ${round2(ratio)} x: ${ratio <= 1.2 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await stop();
    rmSync(root, { recursive: true, force: true });
  }
}
