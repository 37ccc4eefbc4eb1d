import type autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { adminUrl, admin, alternate, pairedRatio, processCpuUs, table, type LoadCase } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  currentUrl: string;
  churnedUrl: string;
  previousUrl: string;
  ownUrl: string;
  hosts: number;
  ttlMs: number;
}

/**
 * Every request to another of `n` production hosts (`site-0` alone when n is 1), each host once
 * per lap, in an order unlike the one they were created and looked up in: a stride of 7919 (a
 * prime, so every host comes round). The Host header is set per request in both cases, so the
 * load generator does the same work for one host as for many.
 */
const spread = (n: number, prefix = 'site') => {
  let i = 0;
  return (req: autocannon.Request): autocannon.Request => {
    i = (i + 7919) % n;
    return { ...req, headers: { ...req.headers, host: `${prefix}-${i}.localhost` } };
  };
};

async function measure(label: string, env: Record<string, string>, seconds: number) {
  const { info, pid, stop } = await spawnBenchServer<Info>('bench/edge-hosts-server.ts', env);
  try {
    const path = '/file-10k.txt';
    const cases: LoadCase[] = [
      { name: 'one host', url: `${info.currentUrl}${path}`, opts: { setupRequest: spread(1) } },
      {
        name: `${info.hosts} hosts`,
        url: `${info.currentUrl}${path}`,
        opts: { setupRequest: spread(info.hosts) },
      },
      {
        name: `${info.hosts} hosts, each its own files`,
        url: `${info.ownUrl}${path}`,
        opts: { setupRequest: spread(info.hosts, 'own') },
      },
      {
        name: `${info.hosts} hosts, 10 routing changes/s`,
        url: `${info.churnedUrl}${path}`,
        opts: { setupRequest: spread(info.hosts) },
      },
      {
        name: `${info.hosts} hosts, previous cache (1 s)`,
        url: `${info.previousUrl}${path}`,
        opts: { setupRequest: spread(info.hosts) },
      },
    ];
    const results = await alternate(cases, { seconds, cpu: processCpuUs(pid) });
    const base = results.get('one host')!;
    return [...results].map(([name, r]) => ({
      database: label,
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      ratio_pct: pairedRatio(r, base),
      server_cpu_us_per_req: r.cpuUs ?? '-',
      non2xx: r.non2xx,
    }));
  } finally {
    await stop();
  }
}

/**
 * Edge throughput for traffic spread over 10k production hosts beside traffic to one host, on
 * SQLite and PostgreSQL, in the same run (see `alternate`): the route cache keeps every host's
 * answer for SLIPWAY_EDGE_ROUTE_TTL and a routing change drops only its project's answers.
 * Target: 10k hosts at least 80% of one host on PostgreSQL.
 */
export async function benchEdgeHosts(seconds: number): Promise<string> {
  const rows = await measure('SQLite', {}, seconds);
  const url = adminUrl();
  let verdict = 'PostgreSQL skipped: set SLIPWAY_BENCH_DATABASE_URL or SLIPWAY_TEST_DATABASE_URL.';
  if (url) {
    const name = `slipway_bench_${randomBytes(4).toString('hex')}`;
    await admin(url, `CREATE DATABASE ${name}`);
    try {
      const u = new URL(url);
      u.pathname = `/${name}`;
      const pgRows = await measure('PostgreSQL', { DATABASE_URL: u.toString() }, seconds);
      rows.push(...pgRows);
      const spreadPct = Number(pgRows[1]!.ratio_pct);
      const ownPct = Number(pgRows[2]!.ratio_pct);
      verdict =
        `Target: 10k hosts >= 80% of one host on PostgreSQL -> ${spreadPct}%: ${spreadPct >= 80 ? 'met' : 'NOT met'}; ` +
        `each its own files: ${ownPct}%: ${ownPct >= 80 ? 'met' : 'NOT met'}`;
    } finally {
      await admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  }
  return `Edge, 10 KiB static file over many production hosts (3 alternating ${seconds} s rounds: median requests/s, median of each round's ratio; 10 connections; server in its own process)\n${table(rows)}\n${verdict}`;
}
