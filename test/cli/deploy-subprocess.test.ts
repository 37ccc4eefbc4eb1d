import { createHash } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { spawnCli } from './spawn-cli.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

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
});
