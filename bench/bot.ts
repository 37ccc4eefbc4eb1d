import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { ProbotOctokit } from 'probot';
import { findFreePort } from '../server/core/free-port.ts';
import { startBotRole } from '../server/roles/bot.ts';
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { startStack, type Stack } from '../test/helpers/stack.ts';
import { waitFor } from '../test/helpers/wait-for.ts';
import { table } from './lib.ts';

const OPENS = Number(process.env.BENCH_BOT_OPENS ?? 100);
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
async function startLocalGitHub(delayMs = 0) {
  let nextId = 1;
  let lastAnswer = 0;
  /** When the first check run of each head commit was created. */
  const firstCheck = new Map<string, number>();
  /** When a check run of each head commit was completed with success. */
  const success = new Map<string, number>();
  const runs: { id: number; head_sha: string; name: string; status: string; external_id: string }[] = [];
  const comments: { id: number; issue: number; body: string; user: { type: string } }[] = [];
  const routes: [string, RegExp, (m: RegExpExecArray, body: any) => unknown][] = [
    ['GET', /^\/app$/, () => ({ id: 1, slug: 'bench' })],
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
        if (!firstCheck.has(run.head_sha)) firstCheck.set(run.head_sha, performance.now());
        return run;
      },
    ],
    [
      'PATCH',
      /\/check-runs\/(\d+)$/,
      (m, b) => {
        const run = Object.assign(runs.find((r) => r.id === Number(m[1])) ?? {}, b) as { head_sha?: string };
        if (b.conclusion === 'success' && run.head_sha) success.set(run.head_sha, performance.now());
        return run;
      },
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
    req.on('end', async () => {
      // GitHub answering slowly: every call takes this long.
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
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
    firstCheck,
    success,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A real `pull_request.opened` payload for pull request `n` with head commit `sha` (fresh when not given). */
function openedPayload(
  n: number,
  sha = randomUUID().replaceAll('-', '').padEnd(40, '0'),
): { body: string; sha: string } {
  const body = JSON.stringify({
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
    repository: { id: 7, name: 'site', full_name: 'octo/site', owner: { login: 'octo', type: 'User' } },
    installation: { id: 1 },
    sender: { login: 'dev', type: 'User' },
  });
  return { body, sha };
}

type LocalGitHub = Awaited<ReturnType<typeof startLocalGitHub>>;

/** The bot role against the stack's API and a local GitHub, as `slipway serve --role bot` runs it. */
async function startBenchBot(stack: Stack, github: LocalGitHub, token: string) {
  const port = await findFreePort();
  return startBotRole({
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
}

/** Sends GitHub's signed delivery; answers how long the bot took to acknowledge it. */
async function deliver(botUrl: string, body: string): Promise<number> {
  const signature = await sign(SECRET, body);
  const started = performance.now();
  const res = await fetch(`${botUrl.replace('localhost', '127.0.0.1')}/api/github/webhooks`, {
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
  if (res.status !== 202) throw new Error(`the bot answered ${res.status}`);
  return performance.now() - started;
}

const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return {
    p50_ms: ms(percentile(sorted, 50)),
    p99_ms: ms(percentile(sorted, 99)),
    max_ms: ms(sorted.at(-1) ?? NaN),
  };
};

/** Opens `count` pull requests one after another; acknowledgement and time to the first check run of each. */
async function opens(stack: Stack, github: LocalGitHub, token: string, count: number, first: number) {
  const bot = await startBenchBot(stack, github, token);
  const acks: number[] = [];
  const toCheck: number[] = [];
  try {
    for (let n = first; n < first + WARMUP + count; n++) {
      const { body, sha } = openedPayload(n);
      const sent = performance.now();
      const ack = await deliver(bot.url, body);
      await waitFor(`check run of pull request ${n}`, () => github.firstCheck.has(sha), 60_000);
      if (n >= first + WARMUP) {
        acks.push(ack);
        toCheck.push(github.firstCheck.get(sha)! - sent);
      }
    }
    await bot.idle();
  } finally {
    await bot.stop();
  }
  return { acks, toCheck };
}

/**
 * `npm run bench bot`: how the bot answers GitHub and how soon its work shows. The bot stores
 * each signed delivery in the service's queue and answers 202; the work (config, commit message,
 * Slipway deployment, check, GitHub Deployment, comment) runs from the queue. Measured: the time
 * to acknowledge with GitHub answering in 200 ms (GitHub gives a delivery 10 s), the time to the
 * first check run with GitHub answering locally, and, with a real build of a static site, the
 * time from the delivery to the check's success. Octokit's write throttle is off, as in tests:
 * in production it spaces an installation's writes about a second apart, after the answer.
 */
export async function benchBot(): Promise<string> {
  const stack = await startStack();
  const slow = await startLocalGitHub(200);
  const local = await startLocalGitHub();
  const repo = createGitRepo({ files: { 'index.html': '<h1>bench</h1>' } });
  try {
    const { token, orgId } = await stack.user();
    await stack
      .client(token)
      .projects.create({ name: 'bench', repositoryUrl: repo.url, organizationId: orgId });
    const slowRun = await opens(stack, slow, token, 20, 1);
    const localRun = await opens(stack, local, token, OPENS, 1000);

    // A real build: the pull request's head is a commit of the repository.
    const bot = await startBenchBot(stack, local, token);
    const toSuccess: number[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const sha = repo.commit({ 'index.html': `<h1>bench ${i}</h1>` }, `Change ${i}`);
        const { body } = openedPayload(5000 + i, sha);
        const sent = performance.now();
        await deliver(bot.url, body);
        await waitFor(`check success of ${sha.slice(0, 7)}`, () => local.success.has(sha), 60_000);
        toSuccess.push(local.success.get(sha)! - sent);
      }
    } finally {
      await bot.stop();
    }
    return table([
      {
        case: 'acknowledge pull_request.opened, GitHub answering in 200 ms',
        events: slowRun.acks.length,
        ...stats(slowRun.acks),
      },
      {
        case: 'acknowledge pull_request.opened, GitHub local',
        events: localRun.acks.length,
        ...stats(localRun.acks),
      },
      {
        case: 'delivery -> first check run, GitHub local',
        events: localRun.toCheck.length,
        ...stats(localRun.toCheck),
      },
      {
        case: 'delivery -> check success, static site built and live',
        events: toSuccess.length,
        ...stats(toSuccess),
      },
    ]);
  } finally {
    await slow.stop();
    await local.stop();
    await stack.stop();
    repo.remove();
  }
}
