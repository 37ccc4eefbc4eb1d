import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { spawnCli } from './spawn-cli.ts';

/**
 * ls, open, redeploy, deploy --git, logs of the newest deployment, did-you-mean and an
 * unreachable service: bin/slipway.js in a child process, against a real service.
 */
describe('slipway ls, open, redeploy, deploy --git and logs, run as commands', { timeout: 180_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let env: Record<string, string>;
  /** A folder linked to project "web", which builds `repo`. */
  let linked: string;
  let first: string;
  let webId: string;

  beforeAll(async () => {
    s = await startStack();
    linked = mkdtempSync(join(tmpdir(), 'slipway-linked-'));
    chmodSync(linked, 0o755);
    const u = await s.user();
    env = { SLIPWAY_API_URL: s.apiUrl, SLIPWAY_TOKEN: u.token };
    repo = createGitRepo({ files: { 'index.html': '<h1>first</h1>' } });
    first = repo.git('rev-parse', 'HEAD');
    repo.commit({ 'index.html': '<h1>second</h1>' }, 'Second');
    repo.git('checkout', '-q', '-b', 'feature/login');
    repo.commit({ 'index.html': '<h1>login</h1>' }, 'Login page');
    repo.git('checkout', '-q', 'main');
    webId = (
      await s
        .client(u.token)
        .projects.create({ name: 'web', repositoryUrl: repo.url, organizationId: u.orgId })
    ).id;
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
    if (linked) rmSync(linked, { recursive: true, force: true });
  });

  const cli = (args: string[], cwd = linked, extra: Record<string, string> = {}) =>
    spawnCli(args, cwd, { ...env, ...extra });
  const body = async (url: string) => (await s.fetchFromEdge(url)).text();

  it('deploy --git builds the repository: the branch given, a commit on it, or the project’s branch', async () => {
    expect((await cli(['link', 'web'])).code).toBe(0);

    const branch = await cli(['deploy', '--git', '--branch', 'feature/login', '--json']);
    expect(branch.code, branch.stderr).toBe(0);
    const preview = JSON.parse(branch.stdout);
    expect(preview).toMatchObject({
      status: 'live',
      target: 'preview',
      branch: 'feature/login',
      source: 'git',
    });
    expect(await body(preview.url)).toBe('<h1>login</h1>');

    const pinned = await cli(['deploy', '--git', '--commit', first.slice(0, 12), '--prod']);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stderr).toMatch(/^Deploying web \(production, main\): dpl_/m);
    const production = pinned.stdout.trim();
    expect(production).toBe((await s.client(env.SLIPWAY_TOKEN!).projects.get(webId)).deploymentUrl);
    expect(await body(production)).toBe('<h1>first</h1>');

    const head = await cli(['deploy', '--git', '--branch', 'main']);
    expect(head.code, head.stderr).toBe(0);
    expect(await body(head.stdout.trim())).toBe('<h1>second</h1>');
  });

  it('deploy --git refuses what does not go with it, and --branch without --git, sending nothing', async () => {
    const before = (await s.client(env.SLIPWAY_TOKEN!).deployments.list(webId)).data.length;
    const withFolder = await cli(['deploy', 'dist', '--git']);
    expect(withFolder).toMatchObject({ code: 2, stdout: '' });
    expect(withFolder.stderr).toContain(
      '--git builds the project\'s repository: it takes no folder ("dist").',
    );
    const branchAlone = await cli(['deploy', '--branch', 'main']);
    expect(branchAlone.code).toBe(2);
    expect(branchAlone.stderr).toContain('--branch and --commit go with --git');
    const badCommit = await cli(['deploy', '--git', '--commit', 'main']);
    expect(badCommit.code).toBe(2);
    expect(badCommit.stderr).toContain(
      '--commit must be a commit hash, 7 to 40 hexadecimal characters; got "main".',
    );
    expect((await s.client(env.SLIPWAY_TOKEN!).deployments.list(webId)).data.length).toBe(before);
  });

  it('ls lists the linked project’s deployments newest first, production marked, as a table or JSON', async () => {
    const api = s.client(env.SLIPWAY_TOKEN!);
    const all = (await api.deployments.list(webId)).data;
    const project = await api.projects.get(webId);
    const run = await cli(['ls']);
    expect(run.code, run.stderr).toBe(0);
    const [head, ...rows] = run.stdout.trimEnd().split('\n');
    expect(head!.split(/\s+/)).toEqual(['ID', 'STATUS', 'TARGET', 'BRANCH', 'COMMIT', 'AGE', 'URL']);
    expect(rows.map((r) => r.split(/\s+/)[0])).toEqual(all.map((d) => d.id));
    const prod = rows.find((r) => r.startsWith(`${project.productionDeploymentId} *`));
    expect(prod).toMatch(
      new RegExp(`live\\s+production\\s+main\\s+${first.slice(0, 7)}\\s+\\d+[smhd]\\s+http`),
    );

    const only = await cli(['ls', '--prod', '--limit', '5', '--json']);
    expect(only.code, only.stderr).toBe(0);
    expect(JSON.parse(only.stdout).map((d: { id: string }) => d.id)).toEqual([
      project.productionDeploymentId,
    ]);
    const bad = await cli(['ls', '--limit', '0']);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('--limit must be a whole number from 1 to 100; got "0".');
  });

  it('open prints or opens production’s URL or a deployment’s, and prints it when no browser can be run', async () => {
    const project = await s.client(env.SLIPWAY_TOKEN!).projects.get(webId);
    const printed = await cli(['open', '--print']);
    expect(printed).toMatchObject({ code: 0, stdout: `${project.deploymentUrl}\n` });

    // A browser that writes down what it was asked to open.
    const bin = tempDir();
    const seen = join(bin, 'opened.txt');
    writeFileSync(join(bin, 'browser'), `#!/bin/sh\necho "$1" > ${seen}\n`, { mode: 0o755 });
    const opened = await cli(['open', project.productionDeploymentId!], linked, {
      BROWSER: join(bin, 'browser'),
    });
    expect(opened.code, opened.stderr).toBe(0);
    const deployment = await s.client(env.SLIPWAY_TOKEN!).deployments.get(project.productionDeploymentId!);
    expect(opened.stderr).toBe(`Opened ${deployment.url}\n`);
    // The browser runs on its own: it may write after slipway has exited.
    expect(
      await waitFor('the browser to be started', () =>
        readFile(seen, 'utf8').then(
          (text) => (text.endsWith('\n') ? text : null),
          () => null,
        ),
      ),
    ).toBe(`${deployment.url}\n`);

    const none = await cli(['open'], linked, { BROWSER: join(bin, 'no-such-browser') });
    expect(none).toMatchObject({ code: 0, stdout: `${project.deploymentUrl}\n` });
    expect(none.stderr).toContain(
      `Could not run ${join(bin, 'no-such-browser')} to open a browser; the URL:`,
    );
  });

  it('redeploy builds a deployment again with its commit, whatever its branch’s head is now', async () => {
    const api = s.client(env.SLIPWAY_TOKEN!);
    const project = await api.projects.get(webId);
    const run = await cli(['redeploy', project.productionDeploymentId!, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const again = JSON.parse(run.stdout);
    expect(again).toMatchObject({ status: 'live', target: 'production', commitHash: first });
    expect(again.id).not.toBe(project.productionDeploymentId);
    expect(run.stderr).toContain(
      `Redeploying ${project.productionDeploymentId} (production, main): ${again.id}`,
    );
    expect(await body(again.url)).toBe('<h1>first</h1>');
  });

  it('logs without a deployment follows the newest deployment of the linked project to its end', async () => {
    const queued = await cli(['deploy', '--git', '--no-wait', '--json']);
    expect(queued.code, queued.stderr).toBe(0);
    const id = JSON.parse(queued.stdout).id as string;
    const run = await cli(['logs']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`^Following ${id} \\(preview, main, \\w+\\) of web\\n`));
    expect(run.stderr).toContain(`Deployment ${id} is live.`);
    expect(run.stdout).toContain('==> Live at');
  });

  it('says what a typo meant, for commands and flags, and runs nothing', async () => {
    const command = await cli(['deplyo']);
    expect(command).toMatchObject({ code: 2, stdout: '' });
    expect(command.stderr).toBe(
      'slipway: unknown command "deplyo". Did you mean `slipway deploy`? Run `slipway --help` for the list.\n',
    );
    const flag = await cli(['deploy', '--prdo']);
    expect(flag).toMatchObject({ code: 2, stdout: '' });
    expect(flag.stderr).toBe(
      "slipway deploy: Unknown option '--prdo'. Did you mean --prod?\nRun `slipway deploy --help` for usage.\n",
    );
    const sub = await cli(['env', 'pul']);
    expect(sub).toMatchObject({ code: 2, stdout: '' });
    expect(sub.stderr).toContain('Unknown subcommand "pul": expected ls, pull or push. Did you mean pull?');
    const far = await cli(['ls', '--xyzzy']);
    expect(far.stderr).toBe("slipway ls: Unknown option '--xyzzy'.\nRun `slipway ls --help` for usage.\n");
  });
});

describe('slipway and a service it cannot reach', { timeout: 60_000 }, () => {
  let silent: Server;
  let silentUrl: string;
  let closedUrl: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a hung server, or a proxy with nothing behind it.
    silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    closedUrl = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
    await new Promise((done) => closed.close(done));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((done) => silent?.close(done));
  });

  const whoami = (url: string) =>
    spawnCli(['whoami'], tempDir(), { SLIPWAY_API_URL: url, SLIPWAY_TOKEN: 'slw_unused' });

  it('names the URL and the flag and variable that set it, for a closed port', async () => {
    const run = await whoami(closedUrl);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(
      /^slipway: GET \/v1\/user failed after \d attempts?: fetch failed \(connect ECONNREFUSED/,
    );
    expect(run.stderr).toContain(
      `Check that the service at ${closedUrl} is running, or change --api-url (\`slipway login --api-url <url>\`) or SLIPWAY_API_URL.`,
    );
  });

  it('gives up on a server that accepts and never answers after 2.5 s, not after every retry', async () => {
    const run = await whoami(silentUrl);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(
      `slipway: GET /v1/user failed after 1 attempt: no answer within 2500 ms. Check that the service at ${silentUrl} is running, or change --api-url (\`slipway login --api-url <url>\`) or SLIPWAY_API_URL.\n`,
    );
    expect(sockets.length).toBeGreaterThan(0);
  });
});
