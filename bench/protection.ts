import { alternate, pairedRatio, processCpuUs, table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  edgeUrl: string;
  open: string;
  guarded: string;
  cookie: string;
}

const ROUNDS = 5;

/**
 * What preview protection costs on the edge (docs/protection.md): the same 10 KiB static file
 * from a preview of an unprotected project, and from a protected one with a member's valid
 * cookie (the gate: a cached verified token, the member and host checks, the cookie taken off the
 * request, `Cache-Control: private`), taking turns in the same run against bare node:http
 * answering the same bytes. Neither touches the database per request.
 */
export async function benchProtection(seconds: number): Promise<string> {
  const { info, pid, stop } = await spawnBenchServer<Info>('bench/protection-server.ts');
  const bare = await spawnBenchServer<{ url: string }>('bench/bare-http-server.ts');
  try {
    const cpu = processCpuUs(pid);
    const cases = [
      {
        name: 'unprotected preview',
        url: `${info.edgeUrl}/file-10k.txt`,
        opts: { headers: { host: info.open } },
        cpu,
      },
      {
        name: 'protected, valid cookie',
        url: `${info.edgeUrl}/file-10k.txt`,
        opts: { headers: { host: info.guarded, cookie: info.cookie } },
        cpu,
      },
      {
        name: 'protected, no cookie (302)',
        url: `${info.edgeUrl}/file-10k.txt`,
        opts: { headers: { host: info.guarded } },
        cpu,
      },
      {
        name: 'bare node:http, same bytes',
        url: `${bare.info.url}/file-10k.txt`,
        cpu: processCpuUs(bare.pid),
      },
    ];
    const results = await alternate(cases, { seconds, rounds: ROUNDS });
    const open = results.get('unprotected preview')!;
    const rows = [...results].map(([name, r]) => ({
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      pct_of_unprotected: pairedRatio(r, open),
      server_cpu_us_per_req: r.cpuUs ?? '-',
      non2xx: r.non2xx,
    }));
    const guarded = results.get('protected, valid cookie')!;
    const ratio = pairedRatio(guarded, open);
    const cpuDelta =
      guarded.cpuUs !== undefined && open.cpuUs !== undefined
        ? ` (${guarded.cpuUs >= open.cpuUs ? '+' : ''}${Math.round((guarded.cpuUs - open.cpuUs) * 10) / 10} µs of server CPU a request)`
        : '';
    return `Preview protection on the edge, 10 KiB static file (median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections)\n${table(rows)}\nA protected request with a valid cookie: ${ratio}% of an unprotected one${cpuDelta}; unprotected: ${pairedRatio(open, results.get('bare node:http, same bytes')!)}% of bare node:http`;
  } finally {
    await Promise.all([stop(), bare.stop()]);
  }
}
