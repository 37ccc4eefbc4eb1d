import { performance } from 'node:perf_hooks';
import { createOpsMetrics } from '../server/platform/ops-metrics/ops-metrics.ts';
import { alternate, pairedRatio, processCpuUs, table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  edgeUrl: string;
  host: string;
  metricsUrl?: string;
}

const ROUNDS = 7;

/**
 * Nanoseconds one edge response's recording takes (a counter increment and a histogram
 * observation, as the edge calls it), beside an empty call: the median of 7 runs of 1M calls.
 */
function recordingNs(): number {
  const ops = createOpsMetrics();
  const statuses = [200, 200, 200, 304, 404];
  let sink = 0;
  const empty = (status: number, ms: number) => {
    sink += status + ms;
  };
  const time = (fn: (status: number, ms: number) => void) => {
    const n = 1_000_000;
    const began = performance.now();
    for (let i = 0; i < n; i++) fn(statuses[i % 5]!, (i % 50) / 10);
    return ((performance.now() - began) * 1e6) / n;
  };
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) runs.push(time((s, ms) => ops.edgeRequest(s, ms)) - time(empty));
  if (sink < 0) throw new Error('unreachable');
  return Math.round(runs.sort((a, b) => a - b)[3]! * 10) / 10;
}
const TOKEN = 'bench-operator-token-0123456789';

/**
 * What the operator's Prometheus metrics cost the edge (issue 38: at most 5%): the same stack with
 * metrics off and on (SLIPWAY_METRICS_PORT, which adds a counter increment and a histogram
 * observation per response), serving a 10 KiB static file, taking turns in the same run. Then one
 * scrape of the metrics-on stack: its request count must match what it served, and how long a
 * scrape takes.
 */
export async function benchOpsMetrics(seconds: number): Promise<string> {
  // Without SLIPWAY_METRICS_*, whatever the environment running the bench sets.
  const off = await spawnBenchServer<Info>('bench/stack-server.ts', {
    SLIPWAY_METRICS_PORT: '',
    SLIPWAY_METRICS_TOKEN: '',
  });
  const on = await spawnBenchServer<Info>('bench/stack-server.ts', {
    SLIPWAY_METRICS_PORT: '0',
    SLIPWAY_METRICS_TOKEN: TOKEN,
  });
  try {
    const target = (name: string, s: typeof off) => ({
      name,
      url: `${s.info.edgeUrl}/file-10k.txt`,
      opts: { headers: { host: s.info.host } },
      cpu: processCpuUs(s.pid),
    });
    const results = await alternate([target('metrics off', off), target('metrics on', on)], {
      seconds,
      rounds: ROUNDS,
    });
    const base = results.get('metrics off')!;
    const rows = [...results].map(([name, r]) => ({
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      ratio_pct: pairedRatio(r, base),
      server_cpu_us_per_req: r.cpuUs ?? '-',
      non2xx: r.non2xx,
    }));
    const began = performance.now();
    const res = await fetch(on.info.metricsUrl!, { headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await res.text();
    const scrapeMs = Math.round((performance.now() - began) * 10) / 10;
    const counted = Number(/^slipway_edge_requests_total\{class="2xx"\} (\d+)$/m.exec(text)?.[1] ?? NaN);
    const pct = pairedRatio(results.get('metrics on')!, base);
    const cpuOff = base.cpuUs;
    const cpuOn = results.get('metrics on')!.cpuUs;
    // CPU per request is the verdict: requests/s on a shared machine moves with its neighbours'
    // load more than by a few percent, while the server's CPU per request hardly does.
    const cost = cpuOff && cpuOn ? Math.round(((cpuOn - cpuOff) / cpuOff) * 1000) / 10 : null;
    // What recording itself adds to a request, against the edge's CPU per request with metrics
    // off: the stable measure (two processes' CPU per request differ by several percent anyway).
    const ns = recordingNs();
    const share = cpuOff ? Math.round((ns / (cpuOff * 1000)) * 10000) / 100 : null;
    return [
      `Edge with operator metrics off and on, 10 KiB static file (median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections)`,
      table(rows),
      `Scrape of the metrics-on stack: ${res.status}, ${text.length} bytes in ${scrapeMs} ms; 2xx counted: ${counted}`,
      `Recording one response: ${ns} ns (median of 7 x 1M calls, an empty call subtracted)`,
      share === null
        ? `CPU time not readable here: requests/s with metrics on are ${pct}% of off`
        : `Target: recording costs the edge <= 5% -> ${share}% of its ${cpuOff} us of CPU per request; ` +
          `end to end, metrics on: ${cost}% CPU per request, ${pct}% of the requests/s of off: ${share <= 5 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await Promise.all([off.stop(), on.stop()]);
  }
}
