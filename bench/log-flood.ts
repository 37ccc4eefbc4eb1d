import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createClient } from '../api/client/index.ts';
import { ratio, table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  apiUrl: string;
  token: string;
  quietDeploymentId: string;
  floods: { lineBytes: number; projectId: string }[];
  floodMiB: number;
}

/** Loops of one request at a time each, on kept connections, timing every request until `until` resolves. */
async function timedLoops(
  url: string,
  token: string,
  loops: number,
  until: Promise<unknown>,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: loops });
  let done = false;
  void until.then(() => (done = true));
  const times: number[] = [];
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`GET ${url} answered ${res.statusCode}`));
          times.push(performance.now() - started);
          resolve();
        });
      })
        .on('error', reject)
        .end();
    });
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!done) await once();
    }),
  );
  agent.destroy();
  return times.sort((a, b) => a - b);
}

const at = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]!;
const ms = (x: number) => Math.round(x * 10) / 10;
const wait = (msDelay: number) => new Promise((r) => setTimeout(r, msDelay));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `npm run bench log-flood`: an authenticated `GET /v1/deployments/<id>` (two loops of one request
 * at a time) alone for `seconds`, then while another project's build prints LOG_FLOOD_MB (default
 * 150) MiB of log through the real builder and sandbox, in the same process as the API (`slipway
 * serve`); in lines of 100 bytes, then of 8 (LOG_FLOOD_LINES), LOG_FLOOD_ROUNDS (default 3)
 * rounds each. Target (issue 36): p99 beside the flood within 2 x of p99 alone.
 */
export async function benchLogFlood(seconds: number): Promise<string> {
  const rounds = Number(process.env.LOG_FLOOD_ROUNDS ?? 3);
  const { info, stop } = await spawnBenchServer<Info>('bench/log-flood-server.ts');
  try {
    const api = createClient({ baseUrl: info.apiUrl, token: info.token });
    const url = `${info.apiUrl}/v1/deployments/${info.quietDeploymentId}`;
    await timedLoops(url, info.token, 2, wait(1000));
    const rows: Record<string, string | number>[] = [];
    const out: string[] = [];
    const ratios = new Map<number, number[]>();
    const row = (name: string, t: number[], extra: Record<string, string | number>) => ({
      case: name,
      n: t.length,
      p50_ms: ms(at(t, 0.5)),
      p90_ms: ms(at(t, 0.9)),
      p99_ms: ms(at(t, 0.99)),
      max_ms: ms(t.at(-1)!),
      ...extra,
    });
    for (let round = 1; round <= rounds; round++) {
      for (const flood of info.floods) {
        const alone = await timedLoops(url, info.token, 2, wait(seconds * 1000));
        const started = performance.now();
        const d = await api.deployments.create(flood.projectId);
        const finished = (async () => {
          for (;;) {
            const cur = await api.deployments.get(d.id);
            if (cur.status === 'live' || cur.status === 'failed') return cur;
            await wait(200);
          }
        })();
        const beside = await timedLoops(url, info.token, 2, finished);
        const floodMs = Math.round(performance.now() - started);
        const end = await finished;
        const p99Ratio = Math.round(ratio(at(beside, 0.99), at(alone, 0.99))) / 100;
        ratios.set(flood.lineBytes, [...(ratios.get(flood.lineBytes) ?? []), p99Ratio]);
        rows.push(row(`round ${round}: alone (baseline)`, alone, { p99_ratio: '', flood_ms: '' }));
        rows.push(
          row(`round ${round}: ${flood.lineBytes}-byte lines flooding`, beside, {
            p99_ratio: p99Ratio,
            flood_ms: floodMs,
          }),
        );
        if (round === 1) {
          const last = (
            await api.deployments.logs(d.id, { tail: Number(process.env.LOG_FLOOD_TAIL ?? 4) })
          ).logs.split('\n');
          out.push(
            `${flood.lineBytes}-byte lines: ${end.status}, ${end.errorMessage ?? ''}; the log ends:\n  ${last.join('\n  ')}`,
          );
        }
      }
    }
    return [
      `API beside a build printing ${info.floodMiB} MiB of log: GET /v1/deployments/<id>, 2 loops of one request at a time`,
      table(rows),
      ...out,
      ...[...ratios].map(
        ([lineBytes, rs]) =>
          `${lineBytes}-byte lines: p99 during the flood / alone, median of ${rs.length}: ${median(rs)} x; target <= 2 x -> ${median(rs) <= 2 ? 'met' : 'NOT met'}`,
      ),
    ].join('\n');
  } finally {
    await stop();
  }
}
