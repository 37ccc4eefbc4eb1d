import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../api/client/index.ts';
import { table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  apiUrl: string;
  token: string;
  projectId: string;
  repoDir: string;
  repoUrl: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Create-to-live time of a static repository with no build step, beside `git clone` plus a copy
 * of the same repository timed in the same run. Target: at most 1.5 x baseline + 200 ms.
 */
export async function benchBuilds(runs = 10): Promise<string> {
  const { info, stop } = await spawnBenchServer<Info>('bench/stack-server.ts');
  try {
    const api = createClient({ baseUrl: info.apiUrl, token: info.token });
    const baseline: number[] = [];
    for (let i = 0; i < runs; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-clone-'));
      const t0 = performance.now();
      execFileSync('git', ['clone', '-q', '--depth', '1', info.repoUrl, join(dir, 'src')]);
      cpSync(join(dir, 'src'), join(dir, 'copy'), { recursive: true });
      baseline.push(performance.now() - t0);
      rmSync(dir, { recursive: true, force: true });
    }
    const slipway: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const d = await api.deployments.create(info.projectId, { target: 'preview', branch: 'main' });
      // One streaming request that ends when the deployment is live: no polling delay in the figure.
      const iterator = api.deployments.followLogs(d.id);
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
      }
      slipway.push(performance.now() - t0);
    }
    const b = median(baseline);
    const s = median(slipway);
    const target = 1.5 * b + 200;
    return [
      `Create-to-live, static repository without a build step (median of ${runs})`,
      table([
        {
          case: 'git clone --depth 1 + copy (baseline)',
          median_ms: Math.round(b),
          p_max_ms: Math.round(Math.max(...baseline)),
        },
        {
          case: 'POST deployment -> live (Slipway)',
          median_ms: Math.round(s),
          p_max_ms: Math.round(Math.max(...slipway)),
        },
      ]),
      `Target: <= 1.5 x baseline + 200 ms = ${Math.round(target)} ms -> ${s <= target ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await stop();
  }
}
