import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentRow, storeSite } from '../helpers/edge.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { spawnCli } from './spawn-cli.ts';

/** `slipway protection` as a user runs it (bin/slipway.js in a child process) against a real service. */
describe('slipway protection', { timeout: 120_000 }, () => {
  let s: Stack;
  let dir: string;
  let env: Record<string, string>;
  let host = '';
  let deploymentId = '';
  const cli = (args: string[]) => spawnCli(['protection', ...args, '--project', 'docs-site'], dir, env);

  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_DEFAULT_PROTECTION: 'previews' } });
    const user = await s.user();
    env = { SLIPWAY_API_URL: s.apiUrl, SLIPWAY_TOKEN: user.token };
    dir = mkdtempSync(join(tmpdir(), 'slipway-protection-cli-'));
    const project = await s
      .client(user.token)
      .projects.create({ name: 'docs-site', organizationId: user.orgId });
    const deps = s.running.deps;
    const artifactId = await storeSite(deps.config.artifactsDir, { 'index.html': 'draft' });
    const row = deploymentRow(project.id, new Date().toISOString(), {
      target: 'preview',
      branch: 'draft',
      artifact_id: artifactId,
      runtime: JSON.stringify({ kind: 'static', spa: false }),
    });
    await deps.db.insertInto('deployments').values(row).execute();
    host = `${row.host}.localhost:${s.edgePort}`;
    deploymentId = row.id;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows and sets the protection, refusing a value it does not know', async () => {
    const shown = await cli([]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe('previews\n');
    expect(shown.stderr).toContain('Bypass secret: none');
    const wrong = await cli(['set', 'some']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('expected none, previews or all');
    expect((await cli(['set', 'all'])).code).toBe(0);
    expect((await cli([])).stdout).toBe('all\n');
    expect((await cli(['set', 'previews'])).code).toBe(0);
  });

  it('prints a bypass secret once, which the edge takes as a header', async () => {
    const made = await cli(['bypass']);
    expect(made.code, made.stderr).toBe(0);
    const secret = made.stdout.trim();
    expect(secret).toMatch(/^slwb_[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).toContain('shown this once');
    const through = await s.fetchFromEdge(`http://${host}/`, {
      headers: { 'x-slipway-protection-bypass': secret },
    });
    expect(await through.text()).toBe('draft');
    const shown = await cli(['--json']);
    expect(shown.stdout).not.toContain(secret);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      protection: 'previews',
      bypassCreatedAt: expect.any(String),
    });
    expect((await cli(['bypass', 'rm'])).code).toBe(0);
    expect(
      (await s.fetchFromEdge(`http://${host}/`, { headers: { 'x-slipway-protection-bypass': secret } }))
        .status,
    ).toBe(302);
  });

  it('prints a share link that opens the preview without an account', async () => {
    const made = await cli(['share', deploymentId, '--hours', '1']);
    expect(made.code, made.stderr).toBe(0);
    const link = new URL(made.stdout.trim());
    expect(link.host).toBe(host);
    const opened = await s.fetchFromEdge(link.href);
    expect(opened.status).toBe(302);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await s.fetchFromEdge(`http://${host}/`, { headers: { cookie } })).text()).toBe('draft');
    const tooLong = await cli(['share', deploymentId, '--hours', '1000']);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('expiresInHours');
  });
});
