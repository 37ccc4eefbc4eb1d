import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { adminUrl, admin, load, ratio, table, type LoadResult } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  apiUrl: string;
  edgeUrl: string;
  controlUrl: string;
  host: string;
  token: string;
  projectId: string;
  loadSeconds: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const ms = (n: number) => Math.round(n * 100) / 100;

/** Sequential requests, one client: p50 and p99 of the time to the whole answer (ms). */
async function latencies(url: string, init: RequestInit, count: number) {
  const times: number[] = [];
  for (let i = 0; i < count + 3; i++) {
    const t0 = performance.now();
    const res = await fetch(url, init);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    if (i >= 3) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: ms(pct(times, 50)), p99: ms(pct(times, 99)) };
}

/** Runs `fn` while one client, in its own process, asks `url` in a loop; answers fn's result and the requests made. */
async function whileLooping<T>(url: string | null, token: string | null, fn: () => Promise<T>) {
  if (!url) return { result: await fn(), made: 0 };
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/metrics-loop.ts'], {
    env: { ...process.env, LOOP_URL: url, LOOP_AUTH: token ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  await lines.next();
  try {
    const result = await fn();
    child.kill('SIGTERM');
    return { result, made: Number((await lines.next()).value ?? 0) };
  } finally {
    child.kill('SIGKILL');
  }
}

async function measure(label: string, env: Record<string, string>, seconds: number) {
  const { info, stop } = await spawnBenchServer<Info>('bench/metrics-server.ts', env);
  try {
    const auth = { headers: { authorization: `Bearer ${info.token}` } };
    const metricsUrl = (period: string) =>
      `${info.apiUrl}/v1/projects/${info.projectId}/metrics?period=${period}`;
    const before = await latencies(`${info.controlUrl}/legacy`, {}, 20);
    const after = await latencies(`${info.controlUrl}/rollups`, {}, 300);
    const api = await latencies(metricsUrl('30d'), auth, 300);
    const rows: Record<string, string | number>[] = [
      {
        db: label,
        case: '30d, per-minute rows + JSON (before)',
        p50_ms: before.p50,
        p99_ms: before.p99,
        ratio: '1.0 x',
      },
      {
        db: label,
        case: '30d, minute/hour/day rollups, uncached (after)',
        p50_ms: after.p50,
        p99_ms: after.p99,
        ratio: `${Math.round((before.p50 / after.p50) * 10) / 10} x faster`,
      },
      {
        db: label,
        case: '30d, GET /v1/.../metrics, polled (1 s cache)',
        p50_ms: api.p50,
        p99_ms: api.p99,
        ratio: `${Math.round((before.p50 / api.p50) * 10) / 10} x faster`,
      },
    ];

    // The edge, alone and while one client loops on 30-day metrics (after, then before), taking
    // turns for three rounds; each case's median round.
    const edgeOpts = { headers: { host: info.host }, seconds };
    const cases: [string, string | null, string | null][] = [
      ['edge alone', null, null],
      [
        'edge + API loop on GET /v1/projects/<id> (floor)',
        `${info.apiUrl}/v1/projects/${info.projectId}`,
        info.token,
      ],
      ['edge + API 30d metrics loop (after)', metricsUrl('30d'), info.token],
      ['edge + uncached 30d loop (after)', `${info.controlUrl}/rollups`, null],
      ['edge + 30d metrics loop (before)', `${info.controlUrl}/legacy`, null],
    ];
    await load(`${info.edgeUrl}/file-10k.txt`, { ...edgeOpts, seconds: 1 });
    const runs = new Map<string, { r: LoadResult; made: number }[]>(cases.map(([n]) => [n, []]));
    for (let round = 0; round < 3; round++) {
      for (const [name, url, token] of cases) {
        const { result, made } = await whileLooping(url, token, () =>
          load(`${info.edgeUrl}/file-10k.txt`, edgeOpts),
        );
        runs.get(name)!.push({ r: result, made });
      }
    }
    const edgeRows: Record<string, string | number>[] = [];
    let base = 0;
    for (const [name, rs] of runs) {
      const median = [...rs].sort((a, b) => a.r.rps - b.r.rps)[1]!;
      if (name === 'edge alone') base = median.r.rps;
      edgeRows.push({
        db: label,
        case: name,
        edge_rps: median.r.rps,
        edge_p99_ms: median.r.p99,
        ratio_pct: ratio(median.r.rps, base),
        metrics_per_s: Math.round((median.made / seconds) * 10) / 10,
      });
    }
    return { rows, edgeRows, loadSeconds: info.loadSeconds };
  } finally {
    await stop();
  }
}

/**
 * Project metrics over 30 days of per-minute traffic (43,200 minutes, every one with traffic):
 * p50/p99 of `GET /v1/projects/<id>/metrics?period=30d` from the rollups against the same
 * computation as before them (every minute row read and its JSON parsed), in the same process
 * and run; then a warm edge's throughput while one client loops on each. SQLite, and PostgreSQL
 * when SLIPWAY_BENCH_DATABASE_URL or SLIPWAY_TEST_DATABASE_URL is set.
 * Targets: 30d p50 < 20 ms; the edge keeps >= 80% of its throughput.
 */
export async function benchMetrics(seconds = Number(process.env.BENCH_SECONDS ?? 5)): Promise<string> {
  const results = [await measure('SQLite', {}, seconds)];
  const url = adminUrl();
  if (url) {
    const name = `slipway_bench_${randomBytes(4).toString('hex')}`;
    await admin(url, `CREATE DATABASE ${name}`);
    try {
      const u = new URL(url);
      u.pathname = `/${name}`;
      results.push(await measure('PostgreSQL', { DATABASE_URL: u.toString() }, seconds));
    } finally {
      await admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  }
  const verdicts = results.map((r) => {
    const after = r.rows[1]!.p50_ms as number;
    const loop = r.edgeRows[2]!.ratio_pct as number;
    const uncached = r.edgeRows[3]!.ratio_pct as number;
    return `${r.rows[0]!.db}: 30d p50 uncached ${after} ms (target < 20: ${after < 20 ? 'met' : 'NOT met'}); edge keeps ${loop}% while a client polls the API (target >= 80: ${loop >= 80 ? 'met' : 'NOT met'}), ${uncached}% against uncached reads; data loaded in ${r.loadSeconds} s`;
  });
  return [
    'Project metrics over 30 days of per-minute traffic (one client, sequential requests)',
    table(results.flatMap((r) => r.rows)),
    '',
    `Warm edge, 10 KiB static file, 10 connections, median of 3 alternating ${seconds} s rounds, while one client loops on 30d metrics in the same process`,
    table(results.flatMap((r) => r.edgeRows)),
    ...(url ? [] : ['PostgreSQL rows skipped: set SLIPWAY_BENCH_DATABASE_URL or SLIPWAY_TEST_DATABASE_URL.']),
    ...verdicts,
  ].join('\n');
}
