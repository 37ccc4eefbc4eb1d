import { alternate, pairedRatio, processCpuUs, table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  edgeUrl: string;
  host: string;
  metricsUrl?: string;
}

const ROUNDS = 5;
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
    return [
      `Edge with operator metrics off and on, 10 KiB static file (median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections)`,
      table(rows),
      `Scrape of the metrics-on stack: ${res.status}, ${text.length} bytes in ${scrapeMs} ms; 2xx counted: ${counted}`,
      cost === null
        ? `CPU time not readable here: requests/s with metrics on are ${pct}% of off`
        : `Target: metrics cost the edge <= 5% -> ${cost}% more CPU per request (requests/s ${pct}% of off): ${cost <= 5 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await Promise.all([off.stop(), on.stop()]);
  }
}
