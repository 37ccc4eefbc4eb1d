import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/core/ids.ts';
import { deploymentRow, storeSite } from '../helpers/edge.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { spawnCli } from './spawn-cli.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The line of docs/protection.md that starts with `start`, as written (its comment is bash's);
 * docs/cli.md's line of the same command must run the same command.
 */
function docLine(start: string): string {
  const lines = (doc: string) =>
    readFileSync(join(ROOT, doc), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith(start));
  const [line] = lines('docs/protection.md');
  expect(line, `a line of docs/protection.md starting with ${start}`).toBeDefined();
  const command = (l: string) => l.replace(/\s+#.*$/, '');
  for (const other of lines('docs/cli.md')) expect(command(other)).toBe(command(line!));
  return line!;
}

/** `slipway protection` as a user runs it (bin/slipway.js in a child process) against a real service. */
describe('slipway protection', { timeout: 120_000 }, () => {
  let s: Stack;
  let dir: string;
  let env: Record<string, string>;
  let host = '';
  let deploymentId = '';
  let projectId = '';
  let user: { token: string; orgId: string; userId: string };
  const cli = (args: string[]) => spawnCli(['protection', ...args, '--project', 'docs-site'], dir, env);

  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_DEFAULT_PROTECTION: 'previews' } });
    user = await s.user();
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
    projectId = project.id;
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

  it("lists and revokes share links as docs/protection.md shows; the revoked link's cookie is refused", async () => {
    // `slipway` on the PATH, in a folder linked to the project: the documented lines as a user runs them.
    const home = join(dir, 'home');
    const bin = join(home, 'bin');
    const linked = join(dir, 'site');
    mkdirSync(bin, { recursive: true });
    mkdirSync(linked);
    writeFileSync(
      join(bin, 'slipway'),
      `#!/bin/sh\nexec "${process.execPath}" "${ROOT}/bin/slipway.js" "$@"\n`,
    );
    chmodSync(join(bin, 'slipway'), 0o755);
    expect((await spawnCli(['link', 'docs-site'], linked, env)).code).toBe(0);
    const shell = async (line: string, extra: Record<string, string> = {}) => {
      try {
        const { stdout, stderr } = await promisify(execFile)('bash', ['-c', line], {
          cwd: linked,
          env: { HOME: home, PATH: `${bin}:${process.env.PATH}`, ...env, ...extra },
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };

    const made = await cli(['share', deploymentId, '--hours', '2', '--json']);
    const link = JSON.parse(made.stdout) as { id: string; url: string; expiresAt: string };
    const opened = await s.fetchFromEdge(link.url);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await s.fetchFromEdge(`http://${host}/`, { headers: { cookie } })).text()).toBe('draft');

    const listed = await shell(docLine('slipway protection share list'));
    expect(listed.code, listed.stderr).toBe(0);
    const [head, ...rows] = listed.stdout.trim().split('\n');
    expect(head!.split(/\s{2,}/)).toEqual(['ID', 'OPENS', 'EXPIRES', 'MADE BY']);
    const row = rows.find((r) => r.startsWith(link.id));
    expect(row!.split(/\s{2,}/)).toEqual([link.id, `http://${host}`, link.expiresAt, expect.any(String)]);
    expect(listed.stdout).not.toContain(new URL(link.url).searchParams.get('token'));
    const json = await cli(['share', 'list', '--json']);
    expect((JSON.parse(json.stdout) as { id: string }[]).map((l) => l.id)).toContain(link.id);

    // A developer may list, not revoke; the refusal says so.
    const dev = await s.user();
    await s.running.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: user.orgId,
        email: `${dev.userId}@dev.test`,
        user_id: dev.userId,
        role: 'developer',
        invited_at: new Date().toISOString(),
        joined_at: new Date().toISOString(),
      })
      .execute();
    const devEnv = { SLIPWAY_TOKEN: dev.token };
    expect((await shell(docLine('slipway protection share list'), devEnv)).code).toBe(0);
    const refused = await shell(docLine('slipway protection share revoke'), { ...devEnv, LINK: link.id });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('admin or owner');
    expect((await s.fetchFromEdge(`http://${host}/`, { headers: { cookie } })).status).toBe(200);
    // Not an id: said before any request.
    const wrong = await cli(['share', 'revoke', 'dpl_x']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('start with psl_');
    expect((await cli(['share', 'revoke'])).stderr).toContain('Missing <link-id>');
    // The API names the field it refuses.
    await expect(s.client(user.token).protection.revokeLink(projectId, 'dpl_x')).rejects.toMatchObject({
      status: 400,
      message: 'Invalid request: linkId: must be an id starting with psl_',
    });

    const revoked = await shell(docLine('slipway protection share revoke'), { LINK: link.id });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toBe(
      `Share link ${link.id} revoked: it opens nothing from now on, and the cookies it set are refused.\n`,
    );
    // The cookie the link set before is refused now, and the link itself opens nothing.
    const after = await s.fetchFromEdge(`http://${host}/`, { headers: { cookie } });
    expect(after.status).toBe(302);
    expect(new URL(after.headers.get('location')!).pathname).toBe('/protection/sign-in');
    expect(await after.text()).not.toContain('draft');
    expect((await s.fetchFromEdge(link.url)).status).toBe(403);
    const again = await shell(docLine('slipway protection share revoke'), { LINK: link.id });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(link.id);
  });
});
