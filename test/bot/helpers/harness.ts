import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { ProbotOctokit } from 'probot';
import type { Project, Protection } from '../../../api/schemas/projects.ts';
import { findFreePort } from '../../../server/core/free-port.ts';
import { type BotRole, type BotRoleOptions, startBotRole } from '../../../server/roles/bot.ts';
import { createGitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { type BotGitHub, createBotGitHub } from './github.ts';
import { pullRequest, pullRequestEvent, type PrSpec } from './payloads.ts';

/** The service webhook secret the bot registers and verifies. */
export const SERVICE_SECRET = 'service-webhook-secret-0123456789';
/** The GitHub App's webhook secret. */
export const GITHUB_SECRET = 'github-webhook-secret';

/**
 * Retries and throttling would only slow tests down (the throttle spaces writes a second apart)
 * and hide failed calls. A function, because Probot sets its own `throttle` options over plain
 * defaults.
 */
export const TestOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  retry: { enabled: false },
  throttle: { ...(options.throttle as object), enabled: false },
}));

let privateKey: string | undefined;
/** An RSA key in the PKCS#1 PEM form GitHub hands out; one per test process. */
export function testPrivateKey(): string {
  privateKey ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
  return privateKey;
}

// A static site: dist/index.html shows message.txt. A commit with gate.txt waits to build until
// the file it names exists (to hold a preview in "building"); one with fail.txt fails its build.
const BUILD = `import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const gate = existsSync('gate.txt') ? readFileSync('gate.txt', 'utf8').trim() : '';
while (gate && !existsSync(gate)) await new Promise((r) => setTimeout(r, 20));
if (existsSync('fail.txt')) {
  console.error('build broke: ' + readFileSync('fail.txt', 'utf8').trim());
  process.exit(2);
}
mkdirSync('dist', { recursive: true });
const env = process.env.SHOW_ENV ? ' ' + process.env.SHOW_ENV : '';
writeFileSync('dist/index.html', '<h1>' + readFileSync('message.txt', 'utf8').trim() + env + '</h1>');
console.log('built the site');
`;

export interface Harness {
  stack: Stack;
  repo: GitRepo;
  github: BotGitHub;
  bot: BotRole;
  project: Project;
  client: ReturnType<Stack['client']>;
  botUrl: string;
  /** The bot's environment, to start another bot process on the same service. */
  botEnv: Record<string, string>;
  /** Feeds a GitHub event to the App, as GitHub's webhook would, and waits for its handler. */
  receive(name: string, payload: unknown): Promise<void>;
  /** Commits files on `branch` (created from main when new); returns the commit. */
  push(branch: string, files: Record<string, string>, message?: string): string;
  /** A fork's commit, reachable only as refs/pull/<n>/head (as GitHub keeps it). */
  pushFork(pull: number, files: Record<string, string>, message?: string): string;
  /** Opens a pull request of `spec.headRef`: registers it with the stand-in and sends `opened`. */
  open(spec: PrSpec): Promise<void>;
  /** A file whose creation releases builds of commits gated on it. */
  gate(): { path: string; release(): void };
  waitForCheck(sha: string, name: string, done: (run: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Waits until the service delivered `event` of a deployment to the bot and the bot acted on it. */
  delivered(deploymentId: string, event: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole thing on 127.0.0.1: the service (API, worker building from a real local git
 * repository, edge), the GitHub stand-in, and the bot role with its HTTP server, registered as
 * the project's webhook receiver so the service's signed deliveries reach it over HTTP.
 */
export async function startHarness(
  opts: {
    config?: string | null;
    projectName?: string;
    bot?: Partial<BotRoleOptions>;
    /** The project's preview protection (default `none`, as the other features' tests keep it). */
    protection?: Protection;
  } = {},
): Promise<Harness> {
  const stack = await startStack();
  // The bot's token is the GitHub App's kind, as the operator makes it (docs/bot.md).
  const { token, orgId } = await stack.user(undefined, { githubApp: true });
  const repo = createGitRepo({
    files: {
      'package.json': JSON.stringify({
        name: 'hello-world',
        private: true,
        scripts: { build: 'node build.mjs' },
      }),
      'build.mjs': BUILD,
      'message.txt': 'hello from main',
    },
  });
  const client = stack.client(token);
  const name = opts.projectName ?? 'hello-world';
  const project = await client.projects.create({
    name,
    repositoryUrl: repo.url,
    organizationId: orgId,
    ...(opts.protection ? { protection: opts.protection } : {}),
  });
  const github = await createBotGitHub(repo);
  github.config = opts.config === undefined ? `project: ${name}\n` : opts.config;
  const port = await findFreePort();
  const botUrl = `http://127.0.0.1:${port}`;
  const botEnv = {
    APP_ID: '1',
    PRIVATE_KEY: testPrivateKey(),
    WEBHOOK_SECRET: GITHUB_SECRET,
    SLIPWAY_API_URL: stack.apiUrl,
    SLIPWAY_API_TOKEN: token,
    SLIPWAY_WEBHOOK_SECRET: SERVICE_SECRET,
    SLIPWAY_BOT_URL: botUrl,
    BOT_PORT: String(port),
    BOT_HOST: '127.0.0.1',
    GITHUB_API_URL: github.url,
  };
  const bot = await startBotRole({
    env: botEnv,
    log: pino({ level: 'silent' }),
    Octokit: TestOctokit,
    ...opts.bot,
  });
  const gates: string[] = [];

  const onBranch = (branch: string, files: Record<string, string>, message: string) => {
    const exists = repo.git('branch', '--list', branch) !== '';
    repo.git('checkout', '-q', ...(exists ? [branch] : ['-b', branch, 'main']));
    try {
      return repo.commit(files, message);
    } finally {
      repo.git('checkout', '-q', 'main');
    }
  };

  const h: Harness = {
    stack,
    repo,
    github,
    bot,
    project,
    client,
    botUrl,
    botEnv,
    receive: (name, payload) => bot.probot.receive({ id: randomUUID(), name, payload } as never),
    push: (branch, files, message = `Change ${branch}`) => onBranch(branch, files, message),
    pushFork(pull, files, message = `Fork change ${pull}`) {
      const sha = onBranch(`fork-tmp-${pull}`, files, message);
      repo.git('update-ref', `refs/pull/${pull}/head`, sha);
      repo.git('branch', '-q', '-D', `fork-tmp-${pull}`);
      return sha;
    },
    async open(spec) {
      github.pulls.set(spec.number, pullRequest(spec));
      await h.receive('pull_request', pullRequestEvent('opened', spec));
    },
    gate() {
      // Inside the repository's .git: builds see the host's disk only through the repository
      // they clone (bound read-only into their sandbox), where a file appearing later shows too.
      const dir = mkdtempSync(join(repo.dir, '.git', 'gate-'));
      chmodSync(dir, 0o755);
      gates.push(dir);
      const path = join(dir, 'open');
      return { path, release: () => writeFileSync(path, 'go') };
    },
    waitForCheck: (sha, name, done, timeoutMs = 20_000) =>
      waitFor(`check ${name} on ${sha.slice(0, 7)}`, () => github.checks(sha, name).find(done), timeoutMs),
    async delivered(deploymentId, event) {
      await waitFor(
        `${event} of ${deploymentId} delivered`,
        async () => {
          for await (const hook of h.client.iterate.webhooks(project.id)) {
            const page = await h.client.webhooks.deliveries(project.id, hook.id, { limit: 100 });
            const hit = page.data.find(
              (d) => d.event === event && d.payload.data.deploymentId === deploymentId,
            );
            if (hit?.status === 'success') return true;
          }
          return false;
        },
        20_000,
      );
      await bot.idle();
    },
    async stop() {
      // Release held builds so the worker can stop.
      for (const dir of gates) if (!existsSync(join(dir, 'open'))) writeFileSync(join(dir, 'open'), 'go');
      await bot.stop();
      await stack.stop();
      await github.stop();
      repo.remove();
      for (const dir of gates) rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** Replaces what changes from run to run (ids, commits, URLs, times) with names, for snapshots. */
export function normalise(text: string, names: Record<string, string>): string {
  let out = text;
  for (const [value, name] of Object.entries(names)) {
    out = out.split(value).join(name);
    if (/^[0-9a-f]{40}$/.test(value)) out = out.split(value.slice(0, 7)).join(name.replace('>', '7>'));
  }
  return out
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, '<time>')
    .replace(/\b\d+(\.\d)? m?s\b/g, '<duration>')
    .replace(/https:\/\/github\.com\/Codertocat\/Hello-World\/runs\/\d+/g, '<check-url>')
    .replace(/https?:\/\/[^\s()]+\/deployments\/[^\s()]+/g, '<dashboard-url>')
    .replace(/<!-- slipway-bot:state [A-Za-z0-9_-]+ -->/, '<!-- slipway-bot:state <state> -->');
}
