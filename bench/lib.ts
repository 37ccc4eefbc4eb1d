import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** The PostgreSQL server the bench uses: SLIPWAY_BENCH_DATABASE_URL, else the test suite's one. */
export const adminUrl = () => process.env.SLIPWAY_BENCH_DATABASE_URL ?? process.env.SLIPWAY_TEST_DATABASE_URL;

/** Runs one statement as the server's administrator (creating and dropping bench databases). */
export async function admin(url: string, text: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

export interface LoadResult {
  rps: number;
  /** Requests answered in all. */
  total: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Drives a URL with autocannon for `seconds` and returns requests/s and latency percentiles (ms). */
export async function load(
  url: string,
  opts: {
    seconds?: number;
    connections?: number;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    /** Changes each request before it is sent (autocannon's `setupRequest`): a Host per request, say. */
    setupRequest?: (req: autocannon.Request) => autocannon.Request;
  } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    duration: opts.seconds ?? 5,
    connections: opts.connections ?? 10,
    method: opts.method ?? 'GET',
    headers: opts.headers ?? {},
    ...(opts.body === undefined ? {} : { body: opts.body }),
    ...(opts.setupRequest ? { requests: [{ setupRequest: opts.setupRequest }] } : {}),
  });
  return {
    rps: Math.round(result.requests.average),
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 1000) / 10);

export function table(rows: Record<string, string | number>[]): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0]!);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(width[i]!)).join('  ');
  return [
    line(cols),
    line(width.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(cols.map((c) => String(r[c])))),
  ].join('\n');
}

export interface LoadCase {
  name: string;
  url: string;
  opts?: Omit<Parameters<typeof load>[1], 'seconds'>;
  /** This target's server CPU time (see `processCpuUs`), when it is not `alternate`'s `cpu`. */
  cpu?: () => number | undefined;
}

/**
 * CPU time (user + system) a process has used so far, in µs, read from /proc (Linux); undefined
 * where it cannot be read.
 */
export function processCpuUs(pid: number | undefined): () => number | undefined {
  return () => {
    if (pid === undefined) return undefined;
    try {
      // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // In clock ticks, 100 a second on Linux.
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    } catch {
      return undefined;
    }
  };
}

/**
 * Measures several targets against each other: each is warmed up for a second, then they take
 * turns for `rounds` rounds of `seconds`, and each gets the median round (by requests/s). Load on
 * the machine that comes and goes then falls on every target alike, not on whichever ran last.
 * With `cpu` (the server's CPU time, see `processCpuUs`; or a case's own), each round also gets the server's CPU
 * µs per request, and each target the median of those (`cpuUs`): unlike requests/s, it hardly
 * depends on whether the load generator and the server had a core each.
 */
export async function alternate(
  cases: LoadCase[],
  opts: { seconds: number; rounds?: number; cpu?: () => number | undefined },
): Promise<Map<string, LoadResult & { rounds: number[]; cpuUs?: number }>> {
  const rounds = opts.rounds ?? 3;
  for (const c of cases) await load(c.url, { ...c.opts, seconds: 1 });
  const runs = new Map<string, (LoadResult & { cpuUs?: number })[]>(cases.map((c) => [c.name, []]));
  for (let i = 0; i < rounds; i++) {
    for (const c of cases) {
      const cpu = c.cpu ?? opts.cpu;
      const before = cpu?.();
      const r = await load(c.url, { ...c.opts, seconds: opts.seconds });
      const after = cpu?.();
      const cpuUs =
        before === undefined || after === undefined || r.total === 0 ? undefined : (after - before) / r.total;
      runs.get(c.name)!.push({ ...r, ...(cpuUs === undefined ? {} : { cpuUs }) });
    }
  }
  const medians = new Map<string, LoadResult & { rounds: number[]; cpuUs?: number }>();
  for (const [name, rs] of runs) {
    const sorted = [...rs].sort((a, b) => a.rps - b.rps);
    const cpus = rs.flatMap((r) => (r.cpuUs === undefined ? [] : [r.cpuUs])).sort((a, b) => a - b);
    const { cpuUs: _, ...median } = sorted[Math.floor(sorted.length / 2)]!;
    medians.set(name, {
      ...median,
      rounds: rs.map((r) => r.rps),
      ...(cpus.length ? { cpuUs: Math.round(cpus[Math.floor(cpus.length / 2)]! * 10) / 10 } : {}),
    });
  }
  return medians;
}

/**
 * `a` as a percentage of `b`, from targets measured by `alternate`: the median of the ratios of
 * each round, whose two runs were seconds apart. Load on the machine that changes between
 * rounds moves both runs of a round alike, so this varies less than a ratio of two medians.
 */
export function pairedRatio(a: { rounds: number[] }, b: { rounds: number[] }): number {
  const ratios = a.rounds.map((rps, i) => rps / (b.rounds[i] || 1)).sort((x, y) => x - y);
  const mid = ratios.length / 2;
  const median = ratios.length % 2 ? ratios[Math.floor(mid)]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
  return Math.round(median * 1000) / 10;
}
