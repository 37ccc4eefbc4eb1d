import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { ProbotOctokit } from 'probot';
import { findFreePort } from '../server/edge/free-port.ts';
import { startBotRole } from '../server/roles/bot.ts';
import { startStack } from '../test/helpers/stack.ts';
import { table } from './lib.ts';

const OPENS = Number(process.env.BENCH_BOT_OPENS ?? 200);
const WARMUP = 5;
const SECRET = 'bench-github-secret';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (v: number) => Math.round(v * 10) / 10;

/**
 * GitHub's API answered on 127.0.0.1 with just enough state for the bot (check runs and comments
 * it reads back), and no checking of the calls, so that the time measured is the bot's. It notes
 * when it answered the last call.
 */
async function startLocalGitHub() {
  let nextId = 1;
  let lastAnswer = 0;
  const runs: { id: number; head_sha: string; name: string; status: string; external_id: string }[] = [];
  const comments: { id: number; issue: number; body: string; user: { type: string } }[] = [];
  const routes: [string, RegExp, (m: RegExpExecArray, body: any) => unknown][] = [
    [
      'POST',
      /^\/app\/installations\/\d+\/access_tokens$/,
      () => ({ token: 'ghs_bench', expires_at: new Date(Date.now() + 3600_000).toISOString() }),
    ],
    [
      'GET',
      /\/contents\/.+$/,
      () => ({
        type: 'file',
        encoding: 'base64',
        content: Buffer.from('project: bench\n').toString('base64'),
      }),
    ],
    ['GET', /\/git\/commits\/(\w+)$/, (m) => ({ sha: m[1], message: 'A change' })],
    [
      'POST',
      /\/check-runs$/,
      (_m, b) => {
        const run = { id: nextId++, ...b };
        runs.push(run);
        return run;
      },
    ],
    [
      'PATCH',
      /\/check-runs\/(\d+)$/,
      (m, b) => Object.assign(runs.find((r) => r.id === Number(m[1])) ?? {}, b),
    ],
    [
      'GET',
      /\/commits\/(\w+)\/check-runs$/,
      (m) => {
        const found = runs.filter((r) => r.head_sha === m[1]);
        return { total_count: found.length, check_runs: found };
      },
    ],
    ['POST', /\/deployments$/, () => ({ id: nextId++ })],
    ['POST', /\/deployments\/\d+\/statuses$/, () => ({ id: nextId++ })],
    ['GET', /\/issues\/(\d+)\/comments$/, (m) => comments.filter((c) => c.issue === Number(m[1]))],
    [
      'POST',
      /\/issues\/(\d+)\/comments$/,
      (m, b) => {
        const c = { id: nextId++, issue: Number(m[1]), body: b.body as string, user: { type: 'Bot' } };
        comments.push(c);
        return c;
      },
    ],
    [
      'PATCH',
      /\/issues\/comments\/(\d+)$/,
      (m, b) => Object.assign(comments.find((c) => c.id === Number(m[1])) ?? {}, b),
    ],
  ];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      for (const [method, regex, answer] of routes) {
        const m = method === req.method ? regex.exec(path) : null;
        if (!m) continue;
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer(m, body)));
        lastAnswer = performance.now();
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastAnswer: () => lastAnswer,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A real `pull_request.opened` payload for pull request `n` with a fresh head commit. */
function openedPayload(n: number): string {
  const sha = randomUUID().replaceAll('-', '').padEnd(40, '0');
  return JSON.stringify({
    action: 'opened',
    number: n,
    pull_request: {
      number: n,
      title: `Change ${n}`,
      state: 'open',
      draft: false,
      merged: false,
      merge_commit_sha: null,
      labels: [],
      html_url: `https://github.com/octo/site/pull/${n}`,
      head: { sha, ref: `feature-${n}`, repo: { full_name: 'octo/site' } },
      base: { ref: 'main', repo: { full_name: 'octo/site' } },
    },
    repository: { name: 'site', full_name: 'octo/site', owner: { login: 'octo', type: 'User' } },
    installation: { id: 1 },
    sender: { login: 'dev', type: 'User' },
  });
}

/**
 * `npm run bench bot`: how long the bot takes to handle `pull_request.opened`, from the moment the
 * signed webhook is sent to its HTTP endpoint until its last GitHub call is answered (config, commit
 * message, Slipway deployment, check, GitHub Deployment and status, comment). GitHub answers
 * locally; the Slipway API is real (SQLite); nothing builds. Octokit's write throttle is off, as
 * in tests: in production it spaces an installation's writes about a second apart.
 */
export async function benchBot(): Promise<string> {
  const stack = await startStack({ roles: ['api'] });
  const github = await startLocalGitHub();
  try {
    const { token, orgId } = await stack.user();
    await stack.client(token).projects.create({
      name: 'bench',
      repositoryUrl: 'https://example.com/bench.git',
      organizationId: orgId,
    });
    const port = await findFreePort();
    const bot = await startBotRole({
      env: {
        APP_ID: '1',
        PRIVATE_KEY: generateKeyPairSync('rsa', {
          modulusLength: 2048,
          privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
          publicKeyEncoding: { type: 'spki', format: 'pem' },
        }).privateKey,
        WEBHOOK_SECRET: SECRET,
        SLIPWAY_API_URL: stack.apiUrl,
        SLIPWAY_API_TOKEN: token,
        SLIPWAY_WEBHOOK_SECRET: 'bench-service-secret-0123',
        SLIPWAY_BOT_URL: `http://127.0.0.1:${port}`,
        BOT_PORT: String(port),
        BOT_HOST: '127.0.0.1',
        GITHUB_API_URL: github.url,
      },
      log: pino({ level: 'silent' }),
      Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
        ...o,
        retry: { enabled: false },
        throttle: { ...(o.throttle as object), enabled: false },
      })),
    });
    const times: number[] = [];
    try {
      for (let n = 1; n <= WARMUP + OPENS; n++) {
        const body = openedPayload(n);
        const signature = await sign(SECRET, body);
        const started = performance.now();
        const res = await fetch(`${bot.url.replace('localhost', '127.0.0.1')}/api/github/webhooks`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': 'pull_request',
            'x-github-delivery': randomUUID(),
            'x-hub-signature-256': signature,
          },
          body,
        });
        await res.text();
        if (res.status !== 200) throw new Error(`the bot answered ${res.status}`);
        if (n > WARMUP) times.push(github.lastAnswer() - started);
      }
    } finally {
      await bot.stop();
    }
    times.sort((a, b) => a - b);
    return table([
      {
        case: 'pull_request.opened -> last GitHub call',
        opens: times.length,
        p50_ms: ms(percentile(times, 50)),
        p99_ms: ms(percentile(times, 99)),
        max_ms: ms(times.at(-1) ?? NaN),
      },
    ]);
  } finally {
    await github.stop();
    await stack.stop();
  }
}
