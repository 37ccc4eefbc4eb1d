import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';
import { runCli, type CliPlace } from './run-cli.ts';

/** The people's CLI against a real service in this process: real uploads, builds and serving. */
describe('slipway, the people’s CLI', { timeout: 120_000 }, () => {
  let s: Stack;
  let root: string;
  let place: CliPlace;
  let site: string;
  let token: string;
  let email: string;
  const created: { preview?: string; prod?: string } = {};
  const cli = (argv: string[], extra: Partial<CliPlace> = {}) => runCli(argv, { ...place, ...extra });
  const write = (path: string, text: string) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  };
  const body = async (url: string) => (await s.fetchFromEdge(url)).text();

  beforeAll(async () => {
    s = await startStack();
    email = `cli-${Date.now()}@example.com`;
    const u = await s.user(email);
    token = u.token;
    await s.client(token).projects.create({
      name: 'site',
      repositoryUrl: 'https://example.invalid/never-cloned.git',
      organizationId: u.orgId,
    });
    root = mkdtempSync(join(tmpdir(), 'slipway-people-cli-'));
    chmodSync(root, 0o755);
    site = join(root, 'site');
    write(join(site, 'index.html'), '<h1>one</h1>');
    write(join(site, 'about/index.html'), '<p>about</p>');
    write(join(site, '.gitignore'), 'notes.txt\ndist/\n');
    write(join(site, 'notes.txt'), 'private notes');
    place = { cwd: site, home: join(root, 'home') };
  });
  afterAll(async () => {
    await s?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('refuses a wrong token with the API’s words, saves nothing, and works before login only with env', async () => {
    const bad = await cli(['login', '--api-url', s.apiUrl], { stdin: 'slw_not-a-real-token\n' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^slipway: .*token.* Run `slipway login` with a valid token\.\n$/i);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const before = await cli(['whoami']);
    expect(before).toMatchObject({ code: 1, stdout: '' });
    expect(before.stderr).toContain('Not logged in: run `slipway login --api-url <url>` first');
    const viaEnv = await cli(['whoami'], { env: { SLIPWAY_API_URL: s.apiUrl, SLIPWAY_TOKEN: token } });
    expect(viaEnv).toMatchObject({ code: 0, stdout: `${email}\n` });
  });

  it('login reads the token from standard input and keeps it readable by its owner alone', async () => {
    const run = await cli(['login', '--api-url', `${s.apiUrl}/v1/`], { stdin: `${token}\n` });
    expect(run.stderr).toContain(`Logged in to ${s.apiUrl} as ${email}.`);
    expect(run.code).toBe(0);
    const dir = join(place.home, '.config/slipway');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'auth.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'auth.json'), 'utf8'))).toEqual({ apiUrl: s.apiUrl, token });
    const who = await cli(['whoami', '--json']);
    expect(JSON.parse(who.stdout)).toMatchObject({ apiUrl: s.apiUrl, email });
  });

  it('deploy needs a project: it says how to link one', async () => {
    const run = await cli(['deploy']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `slipway: No project is linked to ${site}. Add --yes to create project site for it and link it, ` +
        'or run `slipway link <project>` there to deploy into a project that exists.\n',
    );
  });

  it('on a terminal, deploy in a folder not linked asks before creating its project', async () => {
    const dir = join(root, 'asked');
    write(join(dir, 'index.html'), '<h1>asked</h1>');
    const no = await cli(['deploy'], { cwd: dir, terminal: { answers: ['n'] } });
    expect(no.code).toBe(1);
    expect(no.stderr).toMatch(
      /^No project is linked to \S+asked\. Create project asked in \S+ and link it\? \[Y\/n\] n\n/,
    );
    expect(no.stderr).toContain(
      'slipway: Nothing was created. `slipway link <project>` links a project that exists.',
    );
    const yes = await cli(['deploy'], { cwd: dir, terminal: { answers: [''] } });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stderr).toMatch(/Created project asked \(prj_\w+\) in \S+, and linked \S+asked to it\./);
    expect(await body(yes.stdout.trim())).toBe('<h1>asked</h1>');
    const made = /Created project asked \((prj_\w+)\)/.exec(yes.stderr)![1]!;
    await s.client(token).projects.delete(made);
  });

  it('link remembers the project named like the folder, in a file git ignores', async () => {
    const run = await cli(['link']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^Linked .*site to project site \(prj_/);
    const link = JSON.parse(readFileSync(join(site, '.slipway/project.json'), 'utf8'));
    expect(link).toMatchObject({ projectName: 'site', apiUrl: s.apiUrl });
    expect(link.projectId).toMatch(/^prj_/);
    expect(readFileSync(join(site, '.slipway/.gitignore'), 'utf8')).toBe('*\n');
    const missing = await cli(['link', 'nope']);
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.stderr).toBe('slipway: No project named "nope" is visible to you.\n');
  });

  it('deploy uploads the folder without ignored files, follows the build and prints the preview URL', async () => {
    const run = await cli(['deploy']);
    expect(run.code, run.stderr).toBe(0);
    // .gitignore is part of the source, as git has it.
    expect(run.stderr).toContain('Uploading 3 files');
    expect(run.stderr).toContain('3 files to send');
    expect(run.stderr).toMatch(/Deploying site \(preview\): dpl_/);
    expect(run.stderr).toContain('==> Writing 3 uploaded files');
    const url = run.stdout.trim();
    expect(url).toMatch(/^https?:\/\/\S+$/);
    expect(await body(url)).toBe('<h1>one</h1>');
    expect(await body(new URL('/about/', url).href)).toBe('<p>about</p>');
    expect((await s.fetchFromEdge(new URL('/notes.txt', url).href)).status).toBe(404);
    expect((await s.fetchFromEdge(new URL('/.slipway/project.json', url).href)).status).toBe(404);
    created.preview = /Deploying site \(preview\): (dpl_\w+)/.exec(run.stderr)![1];
  });

  it('a changed file alone is sent again; --prod --json makes it production and prints the deployment', async () => {
    write(join(site, 'index.html'), '<h1>two</h1>');
    const run = await cli(['deploy', '--prod', '--json', '--message', 'second']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('1 file to send');
    expect(run.stderr).toContain('2 files already there');
    const deployment = JSON.parse(run.stdout);
    expect(deployment).toMatchObject({
      status: 'live',
      target: 'production',
      source: 'upload',
      message: 'second',
    });
    const project = await s.client(token).projects.get(deployment.projectId);
    expect(project.productionDeploymentId).toBe(deployment.id);
    expect(await body(project.deploymentUrl!)).toBe('<h1>two</h1>');
    created.prod = deployment.id;
  });

  it('--prebuilt serves the folder as it is, git-ignored output included', async () => {
    write(join(site, 'dist/index.html'), '<h1>prebuilt</h1>');
    write(join(site, 'dist/package.json'), '{"scripts":{"build":"exit 1"}}');
    const run = await cli(['deploy', 'dist', '--prebuilt']);
    expect(run.code, run.stderr).toBe(0);
    expect(await body(run.stdout.trim())).toBe('<h1>prebuilt</h1>');
  });

  it('a failed build exits 1 with its reason, the log shown on the way', async () => {
    const broken = join(root, 'broken');
    write(join(broken, 'package.json'), JSON.stringify({ scripts: { build: 'echo going down; exit 3' } }));
    const run = await cli(['deploy', broken, '--project', 'site', '--no-cache']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Build cache: off for this deployment (cache: false)');
    expect(run.stderr).toContain('going down');
    expect(run.stderr).toMatch(/Deployment dpl_\w+ failed: .+/);
  });

  it('logs prints a deployment’s build log, as lines or JSON, and follows an ended one to its end', async () => {
    const plain = await cli(['logs', created.preview!]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('==> Writing 3 uploaded files');
    const json = await cli(['logs', created.preview!, '--json', '--tail', '3']);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(typeof lines[0].line).toBe('string');
    const followed = await cli(['logs', created.preview!, '-f', '--json']);
    expect(followed.code).toBe(0);
    expect(JSON.parse(followed.stdout.trim().split('\n').at(-1)!)).toEqual({
      end: { status: 'live', errorMessage: null },
    });
  });

  it('promote makes the preview production; rollback goes back to the deployment before it', async () => {
    const promoted = await cli(['promote', created.preview!]);
    expect(promoted.code, promoted.stderr).toBe(0);
    const productionUrl = promoted.stdout.trim();
    expect(await body(productionUrl)).toBe('<h1>one</h1>');
    const back = await cli(['rollback']);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout.trim()).toBe(productionUrl);
    expect(back.stderr).toMatch(/Rolled back: production of site is /);
    expect(await body(productionUrl)).toBe('<h1>two</h1>');
    // --to goes back to any earlier production deployment.
    const to = await cli(['rollback', '--to', created.preview!, '--json']);
    expect(to.code, to.stderr).toBe(0);
    expect(JSON.parse(to.stdout)).toMatchObject({ status: 'live', rollbackTo: created.preview });
    expect(await body(productionUrl)).toBe('<h1>one</h1>');
  });

  it('env push, ls and pull round-trip a dotenv file; secrets stay hidden in ls', async () => {
    write(join(site, '.env.production'), 'API_URL=https://api.example.com\nQUOTED="a b#c"\n');
    const pushed = await cli(['env', 'push', '.env.production']);
    expect(pushed.stderr).toBe('site (production): 2 created, 0 updated, 0 left as they were.\n');
    write(join(site, '.env.secret'), 'TOKEN=s3cret\nAPI_URL=changed\n');
    const again = await cli(['env', 'push', '.env.secret', '--secret', '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ created: 1, updated: 0, skipped: 1 });
    const ls = await cli(['env', 'ls']);
    expect(ls.stdout).toMatch(/^KEY\s+ENVIRONMENT\s+VALUE\n/);
    expect(ls.stdout).toMatch(/TOKEN\s+production\s+\(secret\)/);
    expect(ls.stdout).toMatch(/API_URL\s+production\s+https:\/\/api\.example\.com/);
    expect(ls.stdout).not.toContain('s3cret');

    const pulled = await cli(['env', 'pull']);
    expect(pulled.code, pulled.stderr).toBe(0);
    const file = join(site, '.env.local');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe('# Pulled by `slipway env pull` (site, production)');
    const { parse } = await import('dotenv');
    expect(parse(text)).toEqual({ API_URL: 'https://api.example.com', QUOTED: 'a b#c', TOKEN: 's3cret' });
    expect((await cli(['env', 'pull'])).code).toBe(0);

    write(join(site, '.env'), 'MINE=1\n');
    const refused = await cli(['env', 'pull', '.env']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('exists and was not written by slipway env pull: pass --force');
    expect(readFileSync(join(site, '.env'), 'utf8')).toBe('MINE=1\n');
  });

  it('hooks create prints a URL that deploys, once; ls shows no secret; rm revokes it', async () => {
    const made = await cli(['hooks', 'create', 'cms', '--branch', 'main']);
    expect(made.code, made.stderr).toBe(0);
    const url = made.stdout.trim();
    expect(url).toMatch(/\/v1\/hooks\/deploy\/dph_[a-z0-9]{20}\.slwh_[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).toContain('shown this once');
    const posted = await fetch(`${s.apiUrl}${new URL(url).pathname}`, { method: 'POST' });
    expect(posted.status).toBe(201);
    const ls = await cli(['hooks', 'ls']);
    expect(ls.stdout).toMatch(/^ID\s+NAME\s+BRANCH\s+LAST USED\s+MADE BY\n/);
    expect(ls.stdout).toContain('cms');
    expect(ls.stdout).not.toContain('slwh_');
    const [hook] = JSON.parse((await cli(['hooks', 'ls', '--json'])).stdout) as { id: string }[];
    const rm = await cli(['hooks', 'rm', hook!.id]);
    expect(rm.code, rm.stderr).toBe(0);
    expect((await fetch(`${s.apiUrl}${new URL(url).pathname}`, { method: 'POST' })).status).toBe(404);
    const unknown = await cli(['hooks', 'nope']);
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.stderr).toContain('expected ls, create or rm');
  });

  it('projects ls lists the projects as a table and as JSON', async () => {
    const run = await cli(['projects', 'ls']);
    expect(run.stdout).toMatch(/^NAME\s+ID\s+ORGANIZATION\s+PRODUCTION\nsite\s+prj_\w+\s+org_\w+\s+http/);
    const json = JSON.parse((await cli(['projects', 'ls', '--json'])).stdout);
    expect(json.map((p: { name: string }) => p.name)).toEqual(['site']);
  });

  it('projects create makes a project, says so when it exists, and with --exists-ok prints its id again', async () => {
    const made = await cli([
      'projects',
      'create',
      'made-by-cli',
      '--repo',
      'https://example.invalid/made.git',
      '--branch',
      'trunk',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    expect(id).toMatch(/^prj_[a-z0-9]{20}$/);
    expect(made.stderr).toBe(`Created project made-by-cli (${id}).\n`);
    expect((await s.client(token).projects.get(id)).branch).toBe('trunk');
    const again = await cli([
      'projects',
      'create',
      'made-by-cli',
      '--repo',
      'https://example.invalid/made.git',
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^slipway: .*made-by-cli.*already exists/);
    const ok = await cli([
      'projects',
      'create',
      'made-by-cli',
      '--repo',
      'https://example.invalid/made.git',
      '--exists-ok',
    ]);
    expect(ok).toMatchObject({ code: 0, stdout: `${id}\n` });
    await s.client(token).projects.delete(id);
    // Without --repo: a project for uploaded files.
    const uploads = await cli(['projects', 'create', 'no-repo']);
    expect(uploads.code, uploads.stderr).toBe(0);
    const uploadsId = uploads.stdout.trim();
    expect(uploads.stderr).toBe(
      `Created project no-repo (${uploadsId}), for uploaded files: \`slipway deploy\` in a folder.\n`,
    );
    expect((await s.client(token).projects.get(uploadsId)).repositoryUrl).toBeNull();
    const empty = await cli(['projects', 'create', 'empty-repo', '--repo', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--repo needs the URL of a git repository, or leave it out.');
    await s.client(token).projects.delete(uploadsId);
  });

  it('bad input is named and changes nothing; API errors print their message, not a stack', async () => {
    const tail = await cli(['logs', created.preview!, '--tail', '0']);
    expect(tail).toMatchObject({ code: 2, stdout: '' });
    expect(tail.stderr).toBe(
      'slipway logs: --tail must be a whole number from 1 to 10000; got "0".\nRun `slipway logs --help` for usage.\n',
    );
    const unknown = await cli(['deploy', '--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^slipway deploy: Unknown option '--frobnicate'\.\n/);
    const missing = await cli(['logs', 'dpl_doesnotexist']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^slipway: .*not found.*\n$/i);
    const env = await cli(['env', 'pull', '--environment', 'staging']);
    expect(env.stderr).toContain('--environment must be one of production, preview, development.');
    const help = await cli(['rollback', '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: slipway rollback/);
  });

  it('logout forgets the token', async () => {
    const run = await cli(['logout']);
    expect(run.stderr).toMatch(/^Logged out: removed .*auth\.json\.\n$/);
    expect((await cli(['whoami'])).code).toBe(1);
    expect((await cli(['logout'])).stderr).toBe('Not logged in: nothing to do.\n');
  });
});
