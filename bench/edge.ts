import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../server/core/free-port.ts';
import { alternate, pairedRatio, processCpuUs, table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  edgeUrl: string;
  host: string;
}

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/** Starts Debian's nginx serving `root` on a free port; null when nginx is not installed. */
async function startNginx(root: string) {
  if (!NGINX) return null;
  const port = await findFreePort();
  const dir = mkdtempSync(join(tmpdir(), 'slipway-nginx-'));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `user root; worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  server { listen 127.0.0.1:${port}; root ${root}; } }`,
  );
  const child = spawn(NGINX, ['-c', conf, '-p', dir], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  // The one worker, which answers every request (the master only starts it).
  const worker = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0];
  return {
    url: `http://127.0.0.1:${port}`,
    pid: worker ? Number(worker) : undefined,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Edge requests per second for a 10 KiB static file beside nginx serving the same file, each with
 * one worker process, taking turns in the same run (see `alternate`), and bare node:http answering the same bytes
 * from memory (Node.js's ceiling on this machine). Target (issue 18): at least 85% of nginx.
 */
const ROUNDS = 5;

export async function benchEdge(seconds: number): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'slipway-nginx-root-'));
  writeFileSync(join(root, 'file-10k.txt'), 'x'.repeat(10 * 1024));
  const nginx = await startNginx(root);
  const { info, pid, stop } = await spawnBenchServer<Info>('bench/stack-server.ts');
  const bare = await spawnBenchServer<{ url: string }>('bench/bare-http-server.ts');
  try {
    const slipway = {
      name: 'Slipway edge',
      url: `${info.edgeUrl}/file-10k.txt`,
      opts: { headers: { host: info.host } },
      cpu: processCpuUs(pid),
    };
    // Node.js's own ceiling here: the same bytes from memory with no routing at all.
    const ceiling = {
      name: 'bare node:http, same bytes',
      url: `${bare.info.url}/file-10k.txt`,
      cpu: processCpuUs(bare.pid),
    };
    const cases = nginx
      ? [
          { name: 'nginx (1 worker)', url: `${nginx.url}/file-10k.txt`, cpu: processCpuUs(nginx.pid) },
          slipway,
          ceiling,
        ]
      : [slipway, ceiling];
    const results = await alternate(cases, { seconds, rounds: ROUNDS });
    const base = nginx ? results.get('nginx (1 worker)')! : null;
    // Each round's ratio, its two runs seconds apart, then the median: load that comes and goes
    // on the machine moves both alike (see `pairedRatio`).
    const rows = [...results].map(([name, r]) => ({
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      ratio_pct: base ? pairedRatio(r, base) : '-',
      server_cpu_us_per_req: r.cpuUs ?? '-',
      non2xx: r.non2xx,
    }));
    const edge = base ? pairedRatio(results.get('Slipway edge')!, base) : 0;
    const verdict = base
      ? `Target: >= 85% of nginx -> ${edge}%: ${edge >= 85 ? 'met' : 'NOT met'}`
      : 'nginx is not installed (apt-get install nginx-light): no baseline';
    return `Edge, 10 KiB static file (median of ${ROUNDS} alternating ${seconds} s rounds, 10 connections)\n${table(rows)}\n${verdict}`;
  } finally {
    nginx?.stop();
    await Promise.all([stop(), bare.stop()]);
    rmSync(root, { recursive: true, force: true });
  }
}
