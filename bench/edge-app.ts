import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../server/core/free-port.ts';
import { alternate, pairedRatio, processCpuUs, table, type LoadCase } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  edgeUrl: string;
  host: string;
  deploymentId: string;
  controlUrl: string;
}

/** The app measured: node:http answering 1 KiB, listening on $PORT as apps are told to. */
const APP = `import { createServer } from 'node:http';
const body = Buffer.alloc(1024, 'x');
createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.PORT));
`;

const ROUNDS = 5;
const COLD_STARTS = 10;

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/**
 * Debian's nginx (one worker) as a reverse proxy in front of the bare app, keeping its
 * connections to it: what any proxy in front of the app costs on this machine, the floor under
 * the edge's own figure. `directives` go into its `location` (`proxy_buffering off;` to stream
 * as the edge does); `path` is the one asked until it answers. Null when nginx is not installed.
 */
export async function startNginxProxy(appPort: number, directives = '', path = '/') {
  if (!NGINX) return null;
  const port = await findFreePort();
  const dir = mkdtempSync(join(tmpdir(), 'slipway-nginx-proxy-'));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `user root; worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 1024; }
http { access_log off; keepalive_requests 100000; upstream app { server 127.0.0.1:${appPort}; keepalive 32; }
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  server { listen 127.0.0.1:${port}; location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; ${directives} } } }`,
  );
  const child = spawn(NGINX, ['-c', conf, '-p', dir], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; (await get(`http://127.0.0.1:${port}${path}`).catch(() => 0)) !== 200; i++) {
    if (i > 400) throw new Error('nginx did not start');
    await new Promise((r) => setTimeout(r, 5));
  }
  // The one worker, which answers every request (the master only starts it).
  const worker = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0];
  return {
    url: `http://127.0.0.1:${port}/`,
    pid: worker ? Number(worker) : undefined,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number) => Math.round(x * 10) / 10;

/** One request; resolves with its status once the body is read, rejects when it cannot connect. */
function get(url: string, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: host ? { host } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function control<T>(info: Info, path: string, method = 'GET'): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(`${info.controlUrl}${path}`, { method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as T));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Starts `node server.mjs` bare on `port`; `exited` settles when it is gone. */
function startBare(dir: string, port: number) {
  const child = spawn(process.execPath, ['server.mjs'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(port), NODE_ENV: 'production' },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited };
}

/** Bare start to first answer: spawn, then ask every millisecond until it answers. */
async function bareColdStart(dir: string): Promise<number> {
  const port = await findFreePort();
  const began = performance.now();
  const app = startBare(dir, port);
  try {
    for (;;) {
      const status = await get(`http://127.0.0.1:${port}/`).catch(() => null);
      if (status === 200) return performance.now() - began;
      if (app.child.exitCode !== null) throw new Error('the bare app exited');
      await new Promise((r) => setTimeout(r, 1));
    }
  } finally {
    app.child.kill('SIGKILL');
    await app.exited;
  }
}

/** The edge's first request to a stopped app, to its answer (the edge starts the app on it). */
async function edgeColdStart(info: Info): Promise<number> {
  await control(info, '/stop', 'POST');
  const began = performance.now();
  const status = await get(`${info.edgeUrl}/`, info.host);
  const ms = performance.now() - began;
  if (status !== 200) throw new Error(`the edge answered ${status} on a cold start`);
  return ms;
}

/** Sums the CPU time of several processes (µs); undefined when one of them cannot be read. */
function cpuOf(pids: number[]): () => number | undefined {
  const each = pids.map((pid) => processCpuUs(pid));
  return () => {
    let sum = 0;
    for (const read of each) {
      const us = read();
      // A helper that exited (the sandbox's shell once it exec'd) counts for nothing more.
      sum += us ?? 0;
    }
    return sum;
  };
}

/**
 * A server app's throughput, in one run: the same 1 KiB node:http app bare on 127.0.0.1, in the
 * sandbox through its forwarded port, and through the edge (a real deployment of kind `node`
 * started by the edge, as visitors reach it), taking turns (see `alternate`). Then its cold
 * start: from the edge's first request for the stopped app to the answer, against `node
 * server.mjs` bare from spawn to its first answer, a second apart. Targets: >= 80% of bare
 * through the edge; cold start <= bare + 50 ms. With nginx installed, nginx as a reverse proxy in
 * front of the bare app too: what any proxy costs here (the load generator, the proxy and the app
 * share two cores).
 */
export async function benchEdgeApp(seconds: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-app-'));
  writeFileSync(join(dir, 'server.mjs'), APP);
  const {
    info,
    pid: edgePid,
    stop,
  } = await spawnBenchServer<Info>('bench/edge-app-server.ts', {
    BENCH_APP_SOURCE: APP,
  });
  const barePort = await findFreePort();
  const bare = startBare(dir, barePort);
  let nginx: Awaited<ReturnType<typeof startNginxProxy>> = null;
  const extra: (() => Promise<void>)[] = [];
  try {
    // Up when it answers.
    for (let i = 0; (await get(`http://127.0.0.1:${barePort}/`).catch(() => 0)) !== 200; i++) {
      if (i > 2000) throw new Error('the bare app did not start');
      await new Promise((r) => setTimeout(r, 5));
    }
    const app = await control<{ port: number; pids: number[] }>(info, '/app');
    nginx = await startNginxProxy(barePort);
    const sandboxCpu = cpuOf(app.pids);
    const edgeCpu = processCpuUs(edgePid);
    // Each sample of the edge case's CPU, split: the edge's part and the sandbox's.
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
      { name: 'bare app', url: `http://127.0.0.1:${barePort}/`, cpu: processCpuUs(bare.child.pid) },
      { name: 'sandbox, forwarded port', url: `http://127.0.0.1:${app.port}/`, cpu: sandboxCpu },
      {
        name: 'through the edge',
        url: `${info.edgeUrl}/`,
        opts: { headers: { host: info.host } },
        cpu: edgeCase,
      },
    ];
    // The edge's proxy alone in front of the bare app (bench/proxy-server.ts), and with
    // BENCH_BEFORE_TREE (a checkout of another tree, its node_modules linked) that tree's proxy
    // and edge too, in the same turns.
    const before = process.env.BENCH_BEFORE_TREE;
    for (const [name, script] of [
      ["the edge's proxy alone, bare app", 'bench/proxy-server.ts'],
      ...(before
        ? [["the edge's proxy alone, bare app, before", join(before, 'bench/proxy-server.ts')]]
        : []),
    ] as const) {
      const p = await spawnBenchServer<{ url: string }>(script, { BENCH_TARGET_PORT: String(barePort) });
      extra.push(p.stop);
      const bareCpu = processCpuUs(bare.child.pid);
      const proxyCpu = processCpuUs(p.pid);
      cases.push({ name, url: `${p.info.url}/`, cpu: () => (bareCpu() ?? 0) + (proxyCpu() ?? 0) });
    }
    if (before) {
      const b = await spawnBenchServer<Info>(join(before, 'bench/edge-app-server.ts'), {
        BENCH_APP_SOURCE: APP,
      });
      extra.push(b.stop);
      const bApp = await control<{ port: number; pids: number[] }>(b.info, '/app');
      const bCpu = cpuOf([b.pid!, ...bApp.pids]);
      cases.push({
        name: 'through the edge, before',
        url: `${b.info.edgeUrl}/`,
        opts: { headers: { host: b.info.host } },
        cpu: bCpu,
      });
    }
    if (nginx) {
      const bareCpu = processCpuUs(bare.child.pid);
      const nginxCpu = processCpuUs(nginx.pid);
      cases.push({
        name: 'nginx proxy, bare app',
        url: nginx.url,
        cpu: () => (bareCpu() ?? 0) + (nginxCpu() ?? 0),
      });
    }
    const results = await alternate(cases, { seconds, rounds: ROUNDS });
    const base = results.get('bare app')!;
    const rows = [...results].map(([name, r]) => ({
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      ratio_pct: pairedRatio(r, base),
      server_cpu_us_per_req: r.cpuUs ?? '-',
      non2xx: r.non2xx,
      errors: r.errors,
    }));
    const through = pairedRatio(results.get('through the edge')!, base);
    const edgeShare = Math.round((split.edge / (split.edge + split.sandbox || 1)) * 100);

    const bareStarts: number[] = [];
    const edgeStarts: number[] = [];
    // Warm-up of both (the first cold start also writes nothing out: the app ran already).
    await bareColdStart(dir);
    await edgeColdStart(info);
    for (let i = 0; i < COLD_STARTS; i++) {
      // A second apart, as stopped apps are visited: the edge prepares the next app's sandbox
      // half a second after a start.
      await new Promise((r) => setTimeout(r, 1000));
      bareStarts.push(await bareColdStart(dir));
      edgeStarts.push(await edgeColdStart(info));
    }
    const bareMs = round1(median(bareStarts));
    const edgeMs = round1(median(edgeStarts));
    const starts = table([
      {
        case: `cold start, median of ${COLD_STARTS}`,
        bare_ms: bareMs,
        edge_ms: edgeMs,
        added_ms: round1(edgeMs - bareMs),
        edge_range_ms: `${round1(Math.min(...edgeStarts))}-${round1(Math.max(...edgeStarts))}`,
      },
    ]);
    return [
      `Server app, 1 KiB node:http (median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections)`,
      table(rows),
      `Through the edge, server CPU: edge ${edgeShare}%, sandbox (app, helper, pasta) ${100 - edgeShare}%`,
      `Target: >= 80% of the bare app through the edge -> ${through}%: ${through >= 80 ? 'met' : 'NOT met'}`,
      '',
      starts,
      `Target: cold start <= bare + 50 ms -> +${round1(edgeMs - bareMs)} ms: ${edgeMs - bareMs <= 50 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    bare.child.kill('SIGKILL');
    await Promise.all([stop(), bare.exited, nginx?.stop(), ...extra.map((f) => f())]);
    rmSync(dir, { recursive: true, force: true });
  }
}
