import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo } from '../helpers/git-repo.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';
import { runShell } from '../helpers/process.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The text of the first <code> of `html` that holds a slipway command, as a browser shows it. */
function command(html: string): string {
  const code = [...html.matchAll(/<code\s*>([\s\S]*?)<\/code\s*>/g)]
    .map((m) => m[1]!.replace(/\s+/g, ' ').trim())
    .find((c) => c.includes('slipway '));
  expect(code, html).toBeDefined();
  return code!.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

const run = (line: string, env: Record<string, string>) =>
  runShell(line, ROOT, { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env });

/**
 * The commands the dashboard's pages suggest, copied from the page and run as a newcomer would:
 * the token command on the server, then the new-project command with their own repository.
 */
describe('commands the dashboard suggests', () => {
  let s: Stack;
  let home: string;
  const KEY = Buffer.alloc(32, 9).toString('base64');
  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_ENCRYPTION_KEY: KEY } });
    home = mkdtempSync(join(tmpdir(), 'slipway-dashboard-commands-'));
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("the sign-in page's token command makes a token that signs in, and the empty home page's command makes a project", async () => {
    const signIn = await (await fetch(`${s.apiUrl}/sign-in`)).text();
    const tokenLine = command(signIn);
    expect(tokenLine).toBe('npx slipway token create --email you@example.com --name browser');
    // In the server's environment, as its operator runs it: its data directory or its database.
    const database = s.running.deps.config.databaseUrl;
    const made = await run(tokenLine, {
      SLIPWAY_DATA_DIR: s.dataDir,
      SLIPWAY_ENCRYPTION_KEY: KEY,
      HOME: home,
      ...(database ? { DATABASE_URL: database } : {}),
    });
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^slw_\S+$/);

    const form = await fetch(`${s.apiUrl}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.apiUrl },
      body: new URLSearchParams({ token, next: '/' }).toString(),
    });
    expect(form.status).toBe(303);
    const cookie = form.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${s.apiUrl}/`, { headers: { cookie } })).text();
    expect(page).toContain('No projects yet');
    const projectLine = command(page);
    expect(projectLine).toMatch(/^npx slipway projects create my-site --repo <repository URL> --org you$/);
    // The one thing a reader fills in: their repository.
    const created = await run(projectLine.replace('<repository URL>', 'https://github.com/you/my-site.git'), {
      SLIPWAY_API_URL: s.apiUrl,
      SLIPWAY_TOKEN: token,
      HOME: home,
    });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toMatch(/^prj_\w+$/);
    const after = await (await fetch(`${s.apiUrl}/`, { headers: { cookie } })).text();
    expect(after).toContain('my-site');
    expect(after).not.toContain('No projects yet');
  });

  it("an empty project's page tells how to deploy a folder to it, and that command deploys one", async () => {
    const user = await s.user('uploader@example.com');
    const org = (await s.client(user.token).organizations.get(user.orgId)).name;
    const signIn = await fetch(`${s.apiUrl}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.apiUrl },
      body: new URLSearchParams({ token: user.token, next: '/' }).toString(),
    });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(
      await (await fetch(`${s.apiUrl}/new`, { headers: { cookie } })).text(),
    )![1]!;
    // Made with the dashboard's New project form, "Empty, for uploaded files".
    const made = await fetch(`${s.apiUrl}/new`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: s.apiUrl },
      body: new URLSearchParams({
        _csrf: csrf,
        organizationId: user.orgId,
        name: 'folder-site',
        source: 'upload',
      }),
    });
    expect(made.status).toBe(303);
    const page = await (
      await fetch(new URL(made.headers.get('location')!, s.apiUrl), { headers: { cookie } })
    ).text();
    const line = command(page);
    expect(line).toBe(`npx slipway deploy <folder> --project folder-site --org ${org} --prod`);
    const folder = mkdtempSync(join(tmpdir(), 'slipway-dashboard-folder-'));
    writeFileSync(join(folder, 'index.html'), '<h1>from a folder</h1>');
    try {
      const deployed = await run(line.replace('<folder>', folder), {
        SLIPWAY_API_URL: s.apiUrl,
        SLIPWAY_TOKEN: user.token,
        HOME: home,
      });
      expect(deployed.code, deployed.stderr).toBe(0);
      const url = deployed.stdout.trim();
      expect(url).toMatch(/^http:\/\/\S+$/);
      const project = (await s.client(user.token).projects.list({ org: user.orgId })).data.find(
        (p) => p.name === 'folder-site',
      )!;
      expect(project.productionDeploymentId).not.toBeNull();
      expect(project.deploymentUrl).toBe(url);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('links to the port the API listens on when it was started on a free one (PORT=0)', async () => {
    const user = await s.user('links@example.com');
    const api = s.client(user.token);
    const repo = createGitRepo({ files: { 'index.html': '<h1>links</h1>' } });
    const project = await api.projects.create({
      name: 'links',
      repositoryUrl: repo.url,
      organizationId: user.orgId,
    });
    const d = await api.deployments.create(project.id);
    const port = new URL(s.apiUrl).port;
    expect(port).not.toBe('0');
    // The link the App's comment and the Action print; it named localhost:0 before.
    expect(d.dashboardUrl).toBe(`http://localhost:${port}/deployments/${d.id}`);
    await deploymentDone(api, d.id);
    repo.remove();
  });
});
