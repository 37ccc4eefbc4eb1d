import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { startBenchServer } from './api.ts';
import { adminUrl, admin, alternate, load, pairedRatio, table, type LoadResult } from './lib.ts';

type Server = Awaited<ReturnType<typeof startBenchServer>>;

/**
 * Authenticated reads, 10 connections spread evenly over the servers, requests/s summed: by one
 * user, or (`members`) by the project's members in turn, each with a token of their own.
 */
async function readLoad(servers: Server[], seconds: number, members: boolean): Promise<LoadResult> {
  const per = Math.max(1, Math.floor(10 / servers.length));
  const results = await Promise.all(
    servers.map(({ info }) => {
      let turn = 0;
      const tokens = members ? info.memberTokens : [info.token];
      return load(`${info.base}/v1/projects/${info.projectId}`, {
        seconds,
        connections: per,
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${tokens[turn++ % tokens.length]}` },
        }),
      });
    }),
  );
  return {
    rps: results.reduce((n, r) => n + r.rps, 0),
    total: results.reduce((n, r) => n + r.total, 0),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    errors: results.reduce((n, r) => n + r.errors, 0),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
  };
}

async function measure(env: Record<string, string>, processes: number, seconds: number, members = false) {
  const servers: Server[] = [];
  try {
    // One after the other: the first migrates the database (and makes the members).
    for (let i = 0; i < processes; i++) {
      servers.push(await startBenchServer({ ...env, BENCH_MEMBERS: members && i === 0 ? '10' : '0' }));
    }
    // A second to warm up (the JIT, each process's connections), as `alternate` does.
    await readLoad(servers, 1, members);
    return await readLoad(servers, seconds, members);
  } finally {
    for (const s of servers) s.stop();
  }
}

/**
 * The ceiling the database sets on this machine: `SELECT 1` through a pool of 10, from 10
 * concurrent callers (the API's load), as requests per second. An API read costs one round trip
 * (the rate-limit count and the project with the caller's role in one statement; the token
 * lookup is cached).
 */
async function roundTrips(url: string, seconds: number): Promise<LoadResult> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => undefined);
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < until) {
          const t = performance.now();
          await pool.query('select 1');
          latencies.push(performance.now() - t);
        }
      }),
    );
  } finally {
    await pool.end();
  }
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)]! * 10) / 10;
  return {
    rps: Math.round(latencies.length / seconds),
    total: latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    errors: 0,
    non2xx: 0,
  };
}

/**
 * API throughput on PostgreSQL beside SQLite, and with 2 API processes beside 1 on one
 * PostgreSQL database, in the same run. Without a PostgreSQL server only the SQLite row is measured.
 */
export async function benchScale(seconds: number): Promise<string> {
  const rows: Record<string, string | number>[] = [];
  const row = (name: string, r: LoadResult) => ({
    case: name,
    rps: r.rps,
    p50_ms: r.p50,
    p99_ms: r.p99,
    non2xx: r.non2xx,
  });
  const url = adminUrl();
  if (!url) {
    rows.push(row('SQLite, 1 API process', await measure({}, 1, seconds)));
    return `Scale-out (GET /v1/projects/:id, ${seconds} s each, 10 connections)\n${table(rows)}\nPostgreSQL rows skipped: set SLIPWAY_BENCH_DATABASE_URL or SLIPWAY_TEST_DATABASE_URL.`;
  }
  const name = `slipway_bench_${randomBytes(4).toString('hex')}`;
  let pct = 0;
  await admin(url, `CREATE DATABASE ${name}`);
  try {
    const u = new URL(url);
    u.pathname = `/${name}`;
    const env = { DATABASE_URL: u.toString() };
    // SQLite and PostgreSQL with one process each take turns (5 rounds): the ratio is paired.
    const servers = [
      await startBenchServer({ BENCH_MEMBERS: '0' }),
      await startBenchServer({ ...env, BENCH_MEMBERS: '0' }),
    ];
    try {
      const [sqlite, postgres] = servers.map(({ info }) => ({
        name: info.base,
        url: `${info.base}/v1/projects/${info.projectId}`,
        opts: { connections: 10, headers: { authorization: `Bearer ${info.token}` } },
      }));
      const turns = await alternate([sqlite!, postgres!], { seconds, rounds: 5 });
      const [s, p] = [turns.get(sqlite!.name)!, turns.get(postgres!.name)!];
      rows.push(row('SQLite, 1 API process', s), row('PostgreSQL, 1 API process', p));
      pct = pairedRatio(p, s);
    } finally {
      for (const server of servers) server.stop();
    }
    rows.push(row('PostgreSQL, 2 API processes', await measure(env, 2, seconds)));
    // One user's requests all update one rate-limit row; ten users' update ten.
    rows.push(row('PostgreSQL, 1 API process, 10 users', await measure(env, 1, seconds, true)));
    rows.push(row('PostgreSQL round trips (baseline)', await roundTrips(u.toString(), seconds)));
  } finally {
    await admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  return `Scale-out (GET /v1/projects/:id with auth and rate limit, ${seconds} s each, 10 connections in all, servers in their own processes)\n${table(rows)}\nTarget (issue 18): PostgreSQL, 1 process >= 40% of SQLite (median of the paired rounds' ratios) -> ${pct}%: ${pct >= 40 ? 'met' : 'NOT met'}\nOn this 2-core machine the load generator and PostgreSQL share the cores with the API processes, so a second process shows the contention rather than a machine's worth of extra capacity; the baseline row is the database's own ceiling here.`;
}
