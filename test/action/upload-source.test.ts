import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';
import { ensureBundle } from './bundle.ts';
import { pushEvent, runAction } from './run-action.ts';

/**
 * `source: workspace` and `source: prebuilt`: the bundled action uploads the checkout (or the
 * build output) to the whole service on 127.0.0.1, which builds or serves it.
 */
describe('the action: deploying the workspace and prebuilt output', () => {
  let s: Stack;
  let token: string;
  let workspace: string;

  beforeAll(async () => {
    [, s] = await Promise.all([ensureBundle(), startStack()]);
    ({ token } = await s.user('uploader@example.com'));
    const me = await s.client(token).user.get();
    await s.client(token).projects.create({
      name: 'checkout',
      // Never cloned: every deployment here is of uploaded files.
      repositoryUrl: 'https://example.invalid/never-cloned.git',
      organizationId: me.organizations[0]!.id,
    });
    workspace = mkdtempSync(join(tmpdir(), 'slipway-workspace-'));
    write({
      '.gitignore': 'node_modules/\ndist/\n*.secret\n',
      'index.html': '<h1>from the workspace</h1>',
      'about.html': '<h1>about</h1>',
      'token.secret': 'never uploaded',
      'node_modules/dep/index.js': 'never uploaded',
      '.git/HEAD': 'ref: refs/heads/main',
      'dist/index.html': '<h1>prebuilt in the workflow</h1>',
    });
  }, 180_000);
  afterAll(async () => {
    await s?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  function write(files: Record<string, string>) {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(workspace, path)), { recursive: true });
      writeFileSync(join(workspace, path), text);
    }
  }
  const action = (inputs: Record<string, string>) =>
    runAction({
      inputs: { 'api-url': s.apiUrl, 'api-token': token, project: 'checkout', ...inputs },
      ...pushEvent({ sha: 'a'.repeat(40), branch: 'main', message: 'Upload' }),
      env: { GITHUB_WORKSPACE: workspace, GITHUB_SHA: 'a'.repeat(40), GITHUB_REF: 'refs/heads/main' },
    });

  it('uploads the checkout without what git ignores, builds it, and sends only changes the next time', async () => {
    const first = await action({ source: 'workspace' });
    expect(first.error).toBeNull();
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      'Uploading the workspace .: 3 files (70 B); 3 files to send (70 B), 0 files already in Slipway',
    );
    expect(first.stdout).toMatch(/Uploaded in .*: sent 3 files, skipped 0 files already present/);
    const d = await s.client(token).deployments.get(first.outputs['deployment-id']!);
    expect(d).toMatchObject({ status: 'live', source: 'upload', commitHash: 'a'.repeat(40) });
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>from the workspace</h1>');
    expect((await s.fetchFromEdge(new URL('/token.secret', d.url).href)).status).toBe(404);

    write({ 'index.html': '<h1>changed</h1>' });
    const second = await action({ source: 'workspace' });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('1 file to send (16 B), 2 files already in Slipway');
    const d2 = await s.client(token).deployments.get(second.outputs['deployment-id']!);
    expect(await (await s.fetchFromEdge(d2.url)).text()).toBe('<h1>changed</h1>');
  });

  it('serves prebuilt output as it is, even when git ignores it', async () => {
    const r = await action({ source: 'prebuilt', 'output-directory': 'dist' });
    expect(r.error).toBeNull();
    expect(r.stdout).toContain('Uploading prebuilt output dist: 1 file');
    const d = await s.client(token).deployments.get(r.outputs['deployment-id']!);
    expect(d).toMatchObject({ status: 'live', source: 'prebuilt' });
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>prebuilt in the workflow</h1>');
  });

  it('names the input when the directory is wrong or missing, and sends nothing', async () => {
    const none = await action({ source: 'prebuilt' });
    expect(none.code).toBe(1);
    expect(none.error).toContain(
      'Input "output-directory" is required with source: prebuilt (the directory your build wrote)',
    );
    const missing = await action({ source: 'prebuilt', 'output-directory': 'build' });
    expect(missing.code).toBe(1);
    expect(missing.error).toContain(`Input "output-directory": ${join(workspace, 'build')} does not exist`);
    const promote = await action({ command: 'promote', source: 'workspace' });
    expect(promote.error).toContain('Input "source" is for the deploy command');
  });

  it('leaves .env files, node_modules and .git out of the workspace as slipway deploy does, and says so', async () => {
    const dir = join(workspace, 'site');
    const secret = `API_KEY=sk_live_${Date.now()}`;
    const files = {
      'site/index.html': '<h1>site</h1>',
      'site/.env.local': secret,
      'site/.env.example': 'API_KEY=',
      'site/node_modules/left-pad/index.js': 'module.exports = 1',
      'site/.git/config': '[core]',
    };
    write(files);
    try {
      const r = await action({ source: 'workspace', directory: 'site' });
      expect(r.error).toBeNull();
      expect(r.stdout).toContain(
        'Left out: .env.local, node_modules/ (1 file) — see docs/cli.md#what-is-uploaded',
      );
      const d = await s.client(token).deployments.get(r.outputs['deployment-id']!);
      expect(d.status).toBe('live');
      // What the deployment lists, as the service stored it to build.
      const row = await s.running.deps.db
        .selectFrom('deployments')
        .select('build_spec')
        .where('id', '=', d.id)
        .executeTakeFirstOrThrow();
      const spec = JSON.parse(row.build_spec!) as { source: { files: { path: string }[] } };
      expect(spec.source.files.map((f) => f.path).sort()).toEqual(['.env.example', 'index.html']);
      expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>site</h1>');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
