import { join } from 'node:path';
import { alternate, pairedRatio, processCpuUs, table, type LoadCase } from './lib.ts';
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
 * answering the same bytes. Neither touches the database per request. With BENCH_BEFORE_TREE (a
 * checkout of another tree, its node_modules linked), that tree's service answers the same two
 * cases in the same turns, from a process of its own.
 */
export async function benchProtection(seconds: number): Promise<string> {
  const { info, pid, stop } = await spawnBenchServer<Info>('bench/protection-server.ts');
  const bare = await spawnBenchServer<{ url: string }>('bench/bare-http-server.ts');
  const beforeTree = process.env.BENCH_BEFORE_TREE;
  const before = beforeTree
    ? await spawnBenchServer<Info>(join(beforeTree, 'bench/protection-server.ts'))
    : null;
  try {
    const cpu = processCpuUs(pid);
    const cases: LoadCase[] = [
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
    if (before) {
      const beforeCpu = processCpuUs(before.pid);
      cases.push(
        {
          name: 'unprotected preview, before',
          url: `${before.info.edgeUrl}/file-10k.txt`,
          opts: { headers: { host: before.info.open } },
          cpu: beforeCpu,
        },
        {
          name: 'protected, valid cookie, before',
          url: `${before.info.edgeUrl}/file-10k.txt`,
          opts: { headers: { host: before.info.guarded, cookie: before.info.cookie } },
          cpu: beforeCpu,
        },
      );
    }
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
    const beforeOpen = results.get('unprotected preview, before');
    const beforeGuarded = results.get('protected, valid cookie, before');
    const beforeLine =
      beforeOpen && beforeGuarded
        ? `\nThe tree before: a protected request with a valid cookie ${pairedRatio(beforeGuarded, beforeOpen)}% of an unprotected one; this tree's protected request ${pairedRatio(guarded, beforeGuarded)}% of the tree before's`
        : '';
    return `Preview protection on the edge, 10 KiB static file (median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections)\n${table(rows)}\nA protected request with a valid cookie: ${ratio}% of an unprotected one${cpuDelta}; unprotected: ${pairedRatio(open, results.get('bare node:http, same bytes')!)}% of bare node:http${beforeLine}`;
  } finally {
    await Promise.all([stop(), bare.stop(), before?.stop()]);
  }
}
