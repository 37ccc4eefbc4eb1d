import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { alternate, load, pairedRatio, ratio, table, type LoadResult } from './lib.ts';

interface ServerInfo {
  base: string;
  bareUrl: string;
  token: string;
  /** Tokens of other members of the project's organization (BENCH_MEMBERS of them). */
  memberTokens: string[];
  projectId: string;
  hasDeployments: boolean;
}

/** Starts bench/api-server.ts in a child process and waits for its JSON line. */
export async function startBenchServer(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/api-server.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { info: JSON.parse(line) as ServerInfo, stop: () => void child.kill('SIGKILL') };
}

/**
 * Authenticated API reads beside a bare Fastify route answering JSON of the same size, taking
 * turns (see `alternate`), then deployment creation. Target (issue 18): reads >= 50% of the bare route.
 */
export async function benchApi(seconds: number): Promise<string> {
  const { info, stop } = await startBenchServer();
  try {
    const headers = { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' };
    const reads = await alternate(
      [
        { name: 'bare fastify JSON', url: info.bareUrl },
        {
          name: 'GET /v1/projects/:id (auth)',
          url: `${info.base}/v1/projects/${info.projectId}`,
          opts: { headers },
        },
      ],
      { seconds, rounds: 5 },
    );
    const bare = reads.get('bare fastify JSON')!;
    const row = (name: string, r: LoadResult, pct: number) => ({
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      ratio_pct: pct,
      non2xx: r.non2xx,
    });
    const rows = [...reads].map(([name, r]) => row(name, r, pairedRatio(r, bare)));
    const readRatio = pairedRatio(reads.get('GET /v1/projects/:id (auth)')!, bare);
    if (info.hasDeployments) {
      const postRes = await load(`${info.base}/v1/projects/${info.projectId}/deployments`, {
        seconds,
        method: 'POST',
        headers,
        body: JSON.stringify({ message: 'bench' }),
      });
      rows.push(row('POST /v1/projects/:id/deployments', postRes, ratio(postRes.rps, bare.rps)));
    }
    return [
      `API throughput (5 alternating ${seconds} s rounds: median requests/s, median of each round's ratio; 10 connections, SQLite, server in its own process)`,
      table(rows),
      `Target: authenticated reads >= 50% of the bare route -> ${readRatio}%: ${readRatio >= 50 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    stop();
  }
}
