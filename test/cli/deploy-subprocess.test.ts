import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { spawnCli } from './spawn-cli.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const KEY = Buffer.alloc(32, 9).toString('base64');

/** `slipway deploy` as a user runs it: bin/slipway.js in a child process, against a real service. */
describe('slipway deploy, run as a command', { timeout: 180_000 }, () => {
  let s: Stack;
  let user: { token: string; orgId: string; userId: string };
  let env: Record<string, string>;

  beforeAll(async () => {
    s = await startStack();
    user = await s.user();
    env = { SLIPWAY_API_URL: s.apiUrl, SLIPWAY_TOKEN: user.token };
    await s.client(user.token).projects.create({
      name: 'site',
      repositoryUrl: 'https://example.invalid/never-cloned.git',
      organizationId: user.orgId,
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  /** The paths a deployment lists, as the service stored them to build. */
  const listedFiles = async (deploymentId: string) => {
    const row = await s.running.deps.db
      .selectFrom('deployments')
      .select('build_spec')
      .where('id', '=', deploymentId)
      .executeTakeFirstOrThrow();
    const spec = JSON.parse(row.build_spec!) as { source: { files: { path: string }[] } };
    return spec.source.files.map((f) => f.path).sort();
  };
  const uploaded = async (hash: string) =>
    s.running.deps.db
      .selectFrom('uploaded_files')
      .select('sha256')
      .where('organization_id', '=', user.orgId)
      .where('sha256', '=', hash)
      .execute();

  it('leaves .env files and node_modules behind, says so in one line, and never sends the secret', async () => {
    const secret = `API_KEY=sk_live_${Date.now()}\n`;
    const dir = tempDir({
      'index.html': '<h1>site</h1>',
      '.env.local': secret,
      '.env.example': 'API_KEY=\n',
      'node_modules/left-pad/index.js': 'module.exports = 1',
      'node_modules/left-pad/package.json': '{}',
    });
    chmodSync(dir, 0o755);
    const run = await spawnCli(['deploy', '--project', 'site', '--json'], dir, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.split('\n')).toContain(
      'Left out: .env.local, node_modules/ (2 files) — see docs/cli.md#what-is-uploaded',
    );
    const deployment = JSON.parse(run.stdout) as { id: string; url: string; status: string };
    expect(deployment.status).toBe('live');
    expect(await listedFiles(deployment.id)).toEqual(['.env.example', 'index.html']);
    expect(await uploaded(sha256(secret))).toEqual([]);
    expect((await s.fetchFromEdge(new URL('/.env.local', deployment.url).href)).status).toBe(404);
  });

  it('uploads a left-out file that a .slipwayignore negation names, and nothing else of them', async () => {
    const dir = tempDir({
      'index.html': '<h1>site</h1>',
      '.env.production': 'PUBLIC_URL=https://example.com\n',
      '.env.local': 'TOKEN=secret\n',
      '.gitignore': '.env*\n',
      '.slipwayignore': '!.env.production\n',
    });
    chmodSync(dir, 0o755);
    const run = await spawnCli(['deploy', '--project', 'site', '--json', '--no-wait'], dir, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Left out: .env.local — see docs/cli.md#what-is-uploaded\n');
    const deployment = JSON.parse(run.stdout) as { id: string };
    expect(await listedFiles(deployment.id)).toEqual([
      '.env.production',
      '.gitignore',
      '.slipwayignore',
      'index.html',
    ]);
  });

  /** A new user whose organizations are all on the free plan (100 requests an hour), with a project. */
  const freeUser = async (project: string) => {
    const u = await s.user();
    // Before the token's first request: nothing has cached its tier yet.
    await s.running.deps.db
      .updateTable('organizations')
      .set({ plan: 'free' })
      .where('id', '=', u.orgId)
      .execute();
    await s.client(u.token).projects.create({
      name: project,
      repositoryUrl: 'https://example.invalid/never-cloned.git',
      organizationId: u.orgId,
    });
    return u;
  };
  /** What `GET /v1/user` says is left of the window (that request counted). */
  const remaining = async (token: string) => {
    const res = await fetch(`${s.apiUrl}/v1/user`, { headers: { authorization: `Bearer ${token}` } });
    return {
      limit: Number(res.headers.get('x-ratelimit-limit')),
      left: Number(res.headers.get('x-ratelimit-remaining')),
    };
  };

  it('deploys 151 files on the free plan for five requests of its hour: the uploads ride on a grant', async () => {
    const u = await freeUser('many');
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) files[`assets/file-${i}.txt`] = `file ${i} of a large site\n`;
    files['index.html'] = '<h1>many</h1>';
    const dir = tempDir(files);
    chmodSync(dir, 0o755);
    const before = await remaining(u.token);
    expect(before.limit).toBe(100);
    const run = await spawnCli(['deploy', '--project', 'many'], dir, {
      SLIPWAY_API_URL: s.apiUrl,
      SLIPWAY_TOKEN: u.token,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('151 files to send');
    expect(await (await s.fetchFromEdge(run.stdout.trim())).text()).toBe('<h1>many</h1>');
    const after = await remaining(u.token);
    // Find the project by name, ask which files are missing, create the deployment, follow its
    // log, read it as it ended: five, whatever the number of files (the second GET /v1/user is one).
    expect(before.left - after.left - 1).toBe(5);
  });

  it('a 429 says what to do, and doing it (slipway org plan <org> pro) lets the deploy through', async () => {
    const u = await freeUser('limited');
    const org = await s.client(u.token).organizations.get(u.orgId);
    const dir = tempDir({ 'index.html': '<h1>limited</h1>' });
    chmodSync(dir, 0o755);
    const userEnv = { SLIPWAY_API_URL: s.apiUrl, SLIPWAY_TOKEN: u.token };
    // Spend the hour.
    for (let left = Infinity; left > 0;) left = (await remaining(u.token)).left;
    const refused = await spawnCli(['deploy', '--project', 'limited'], dir, userEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        '^slipway: Rate limit of 100 requests per hour exceeded \\(the best plan among your organizations is free\\); ' +
          'retry in \\d+ seconds\\. Plan pro allows 1000 an hour: to put one of your organizations on it, an admin of it ' +
          'sends PATCH /v1/organizations/<id> \\{"plan":"pro"\\}, or the operator runs `slipway org plan <org> pro`\\. ' +
          'See docs/api/auth\\.md#rate-limits\\.\n$',
      ),
    );
    // The operator does what it says, where the service runs.
    const config = s.running.deps.config;
    const plan = await spawnCli(['org', 'plan', org.name, 'pro'], dir, {
      SLIPWAY_DATA_DIR: s.dataDir,
      SLIPWAY_ENCRYPTION_KEY: KEY,
      ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {}),
    });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toBe(`Organization ${org.name} is on plan pro (was free).\n`);
    // The service's cache of the token's tier lasts a second on SQLite.
    await waitFor('the pro tier', async () => (await remaining(u.token)).limit === 1000);
    const run = await spawnCli(['deploy', '--project', 'limited'], dir, userEnv);
    expect(run.code, run.stderr).toBe(0);
  });

  it('in a folder not linked yet: without --yes it says what to run; with --yes it creates the project and links it', async () => {
    const u = await s.user();
    const userEnv = { SLIPWAY_API_URL: s.apiUrl, SLIPWAY_TOKEN: u.token };
    const parent = tempDir();
    const dir = join(parent, 'My Site_v2');
    mkdirSync(dir);
    writeFileSync(join(dir, 'index.html'), '<h1>new</h1>');
    chmodSync(parent, 0o755);
    const api = s.client(u.token);
    const names = async () => (await api.projects.list({ limit: 100 })).data.map((x) => x.name);

    const refused = await spawnCli(['deploy'], dir, userEnv);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `slipway: No project is linked to ${dir}. Add --yes to create project my-site-v2 for it and link it, ` +
        'or run `slipway link <project>` there to deploy into a project that exists.\n',
    );
    expect(await names()).toEqual([]);

    const run = await spawnCli(['deploy', '--yes'], dir, userEnv);
    expect(run.code, run.stderr).toBe(0);
    const [project] = (await api.projects.list({ limit: 100 })).data;
    expect(project).toMatchObject({ name: 'my-site-v2', organizationId: u.orgId, repositoryUrl: null });
    expect(run.stderr).toContain(
      `Created project my-site-v2 (${project!.id}) in ${(await api.organizations.get(u.orgId)).name}, and linked ${dir} to it.\n`,
    );
    expect(JSON.parse(readFileSync(join(dir, '.slipway/project.json'), 'utf8'))).toMatchObject({
      projectId: project!.id,
    });
    expect(await (await s.fetchFromEdge(run.stdout.trim())).text()).toBe('<h1>new</h1>');

    // The next deploy there uses the link; `slipway link <project>` links another folder to it.
    const again = await spawnCli(['deploy'], dir, userEnv);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('Created project');
    const other = tempDir({ 'index.html': '<h1>other</h1>' });
    const link = await spawnCli(['link', 'my-site-v2'], other, userEnv);
    expect(link.code, link.stderr).toBe(0);
    expect(link.stderr).toBe(`Linked ${other} to project my-site-v2 (${project!.id}).\n`);
    expect(await names()).toEqual(['my-site-v2']);
  });
});
