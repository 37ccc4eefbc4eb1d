import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../server/core/free-port.ts';
import { startNginxProxy } from './edge-app.ts';
import { table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  edgeUrl: string;
  host: string;
}

/**
 * The app measured: a streamed page as an SSR framework sends one. Its headers are flushed at
 * once, then three chunks of 4 KiB follow 5 ms apart (the shell, then the request-time parts).
 */
const APP = `import { createServer } from 'node:http';
const chunk = Buffer.alloc(4096, 'x');
createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.flushHeaders();
  let sent = 0;
  const timer = setInterval(() => {
    res.write(chunk);
    if (++sent === 3) {
      clearInterval(timer);
      res.end();
    }
  }, 5);
}).listen(Number(process.env.PORT));
`;

const ROUNDS = 5;
const REQUESTS = 100;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round2 = (x: number) => Math.round(x * 100) / 100;

interface Timing {
  /** Request sent to its status line and headers (the client's `response` event), ms. */
  head: number;
  /** To the first body byte, ms. */
  body: number;
  /** To the end of the answer, ms. */
  end: number;
}

/** `n` GETs one after another on one kept connection; the median of each timing. */
async function timings(url: string, host: string | undefined, n: number): Promise<Timing> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const all: Timing[] = [];
  try {
    for (let i = 0; i < n; i++) {
      all.push(
        await new Promise<Timing>((resolve, reject) => {
          const t0 = performance.now();
          const req = request(url, { agent, headers: host ? { host } : {} }, (res) => {
            const head = performance.now() - t0;
            let body = -1;
            if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
            res.on('data', () => {
              if (body < 0) body = performance.now() - t0;
            });
            res.on('end', () => resolve({ head, body, end: performance.now() - t0 }));
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
  return {
    head: median(all.map((t) => t.head)),
    body: median(all.map((t) => t.body)),
    end: median(all.map((t) => t.end)),
  };
}

/**
 * A streamed answer's first bytes through the edge: the app above bare on 127.0.0.1 and through
 * the edge (a real deployment of kind `node`, as in `edge-app`), one request at a time on a kept
 * connection, the cases taking turns for ${ROUNDS} rounds. The time to the headers is what a
 * browser's TTFB is; target <= 1.1 x bare. With BENCH_BEFORE_TREE (a checkout of another tree,
 * its node_modules linked), that tree's edge is measured in the same turns.
 */
export async function benchEdgeStream(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-stream-'));
  writeFileSync(join(dir, 'server.mjs'), APP);
  const servers = [
    { name: 'through the edge', script: 'bench/edge-app-server.ts' },
    ...(process.env.BENCH_BEFORE_TREE
      ? [
          {
            name: 'through the edge, before',
            script: join(process.env.BENCH_BEFORE_TREE, 'bench/edge-app-server.ts'),
          },
        ]
      : []),
  ];
  const started = await Promise.all(
    servers.map(async (s) => ({
      ...s,
      server: await spawnBenchServer<Info>(s.script, { BENCH_APP_SOURCE: APP }),
    })),
  );
  const barePort = await findFreePort();
  const bare = spawn(process.execPath, ['server.mjs'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(barePort), NODE_ENV: 'production' },
    stdio: 'ignore',
  });
  const bareExited = new Promise<void>((resolve) => bare.once('exit', () => resolve()));
  // The edge's proxy alone in front of the bare app: the edge's part without the sandbox's.
  const proxies = await Promise.all(
    started.map(async (s) => ({
      name: s.name.replace('through the edge', "the edge's proxy alone, bare app"),
      server: await spawnBenchServer<{ url: string }>(
        s.script.replace('edge-app-server.ts', 'proxy-server.ts'),
        {
          BENCH_TARGET_PORT: String(barePort),
        },
      ),
    })),
  );
  let nginx: Awaited<ReturnType<typeof startNginxProxy>> = null;
  try {
    for (let i = 0; ; i++) {
      const up = await timings(`http://127.0.0.1:${barePort}/`, undefined, 1).catch(() => null);
      if (up) break;
      if (i > 2000) throw new Error('the bare app did not start');
      await new Promise((r) => setTimeout(r, 5));
    }
    // Any proxy's cost here: nginx streaming (as the edge does) in front of the bare app.
    nginx = await startNginxProxy(barePort, 'proxy_buffering off;');
    const cases = [
      { name: 'bare app', url: `http://127.0.0.1:${barePort}/`, host: undefined as string | undefined },
      ...started.map((s) => ({ name: s.name, url: `${s.server.info.edgeUrl}/`, host: s.server.info.host })),
      ...proxies.map((p) => ({ name: p.name, url: `${p.server.info.url}/`, host: undefined })),
      ...(nginx ? [{ name: 'nginx proxy, bare app', url: nginx.url, host: undefined }] : []),
    ];
    // Warm-up: the edge's connection helper and kept connection to the app, the JIT.
    for (const c of cases) await timings(c.url, c.host, 50);
    const rounds = new Map<string, Timing[]>(cases.map((c) => [c.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of cases) rounds.get(c.name)!.push(await timings(c.url, c.host, REQUESTS));
    }
    const base = rounds.get('bare app')!;
    /** The median of the rounds' ratios to bare, for one timing. */
    const ratio = (name: string, key: keyof Timing) =>
      round2(median(rounds.get(name)!.map((t, i) => t[key] / base[i]![key])));
    const rows = cases.map((c) => {
      const ts = rounds.get(c.name)!;
      return {
        case: c.name,
        head_ms: round2(median(ts.map((t) => t.head))),
        head_x_bare: ratio(c.name, 'head'),
        first_body_ms: round2(median(ts.map((t) => t.body))),
        end_ms: round2(median(ts.map((t) => t.end))),
        end_x_bare: ratio(c.name, 'end'),
      };
    });
    const x = ratio('through the edge', 'head');
    const alone = ratio("the edge's proxy alone, bare app", 'head');
    const any = nginx ? `, nginx there: ${ratio('nginx proxy, bare app', 'head')} x` : '';
    return [
      `Streamed answer (headers flushed, then 3 x 4 KiB 5 ms apart): medians of ${ROUNDS} alternating rounds of ${REQUESTS} sequential requests on one kept connection`,
      table(rows),
      `Target: time to the headers <= 1.1 x bare -> ${x} x: ${x <= 1.1 ? 'met' : 'NOT met'} (the proxy alone in front of the bare app: ${alone} x${any})`,
    ].join('\n');
  } finally {
    bare.kill('SIGKILL');
    await Promise.all([
      bareExited,
      ...started.map((s) => s.server.stop()),
      ...proxies.map((p) => p.server.stop()),
      nginx?.stop(),
    ]);
    rmSync(dir, { recursive: true, force: true });
  }
}
