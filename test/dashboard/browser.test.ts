import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { newId } from '../../server/lib/ids.ts';
import { accessibilityViolations, browserAvailable, launchBrowser } from '../helpers/browser.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Where to save screenshots of the main pages (docs/dashboard.md), when set. */
const SCREENSHOTS = process.env.SLIPWAY_DASHBOARD_SCREENSHOTS;

/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core) against the whole
 * service on 127.0.0.1, with real builds of real git repositories.
 */
describe.skipIf(!browserAvailable())('dashboard in a browser', () => {
  let s: Stack;
  let browser: Browser;
  let gate: Server;
  let gateOpen = false;
  let gatePort = 0;
  let owner: { token: string; orgId: string; userId: string };
  let viewer: { token: string; orgId: string; userId: string };
  const repos: GitRepo[] = [];
  let projectId: string;

  beforeAll(async () => {
    // A build that waits for the test: the test sees its first lines arrive before it lets it finish.
    gate = createServer((_req, res) => res.end(gateOpen ? 'go' : 'wait'));
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    gatePort = (gate.address() as AddressInfo).port;
    s = await startStack({ env: { SLIPWAY_SANDBOX_HOST_PORTS: String(gatePort) } });
    owner = await s.user('owner@example.com');
    viewer = await s.user('viewer@example.com');
    const now = new Date().toISOString();
    await s.running.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: owner.orgId,
        email: 'viewer@example.com',
        user_id: viewer.userId,
        role: 'viewer',
        invited_at: now,
        joined_at: now,
      })
      .execute();
    const repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'gated',
          private: true,
          scripts: { build: 'node build.mjs' },
        }),
        'build.mjs':
          "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
          "console.log('\\x1b[32mstep one\\x1b[0m waiting for the gate');\n" +
          'for (;;) {\n' +
          `  const body = await fetch('http://127.0.0.1:${gatePort}/').then((r) => r.text(), () => 'wait');\n` +
          "  if (body === 'go') break;\n" +
          '  await new Promise((r) => setTimeout(r, 100));\n' +
          '}\n' +
          "console.log('step two: the gate opened');\n" +
          "mkdirSync('dist', { recursive: true });\n" +
          "writeFileSync('dist/index.html', '<h1>gated ' + (process.env.SLIPWAY_GIT_BRANCH ?? '') + '</h1>');\n",
      },
    });
    repos.push(repo);
    const project = await s
      .client(owner.token)
      .projects.create({ name: 'gated', repositoryUrl: repo.url, organizationId: owner.orgId });
    projectId = project.id;
    browser = await launchBrowser();
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await new Promise((r) => gate?.close(r));
    for (const r of repos) r.remove();
  });

  const api = (token = owner.token) => s.client(token);

  async function signedIn(token: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.apiUrl}/`);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${s.apiUrl}/`);
    return { context, page };
  }

  async function expectAccessible(page: Page, what: string) {
    expect(await accessibilityViolations(page), what).toEqual([]);
  }

  const shot = async (page: Page, name: string) => {
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  };

  const finished = (id: string) =>
    waitFor(
      `deployment ${id} to finish`,
      async () => {
        const d = await api().deployments.get(id);
        return (d.status === 'live' || d.status === 'failed') && d;
      },
      90_000,
    );

  async function deployOpen(
    body: Parameters<ReturnType<typeof api>['deployments']['create']>[1] = {},
  ): Promise<Deployment> {
    gateOpen = true;
    const d = await api().deployments.create(projectId, body);
    const done = await finished(d.id);
    expect(done.status, done.errorMessage ?? '').toBe('live');
    return done;
  }

  it('signs in with a token, shows a wrong token’s refusal in words, and is accessible', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.apiUrl}/sign-in`);
    await expectAccessible(page, 'sign-in page');
    await shot(page, 'sign-in');
    await page.getByLabel('API token').fill('slw_' + 'x'.repeat(40));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Unknown or revoked API token');
    await context.close();

    const { context: c2, page: home } = await signedIn(owner.token);
    await expect.poll(() => home.getByRole('link', { name: 'gated' }).count()).toBe(1);
    await expectAccessible(home, 'home page');
    await c2.close();
  });

  it('follows a build live, line by line, to live', async () => {
    gateOpen = false;
    const d = await api().deployments.create(projectId, {});
    const { context, page } = await signedIn(owner.token);
    await page.goto(`${s.apiUrl}/deployments/${d.id}`);
    // The first line arrives while the build waits at the gate: it came by the stream.
    const first = page.locator('#log li', { hasText: 'waiting for the gate' });
    await first.waitFor({ timeout: 60_000 });
    expect(await first.locator('span.f32').textContent()).toBe('step one');
    expect(await page.locator('#status .badge').textContent()).toBe('building');
    await expectAccessible(page, 'deployment page while building');
    gateOpen = true;
    // When the build ends the page shows the final state: live, with its URL.
    await page.locator('#status .badge', { hasText: 'live' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#log li', { hasText: 'step two: the gate opened' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: d.url }).count()).toBe(1);
    await shot(page, 'deployment');

    await page.getByRole('link', { name: 'gated', exact: true }).click();
    await page.locator(`tr[data-id="${d.id}"]`).waitFor();
    await expectAccessible(page, 'project page');
    await shot(page, 'project');
    await context.close();
  });

  it('promotes a preview and rolls back to an earlier production deployment by clicking', async () => {
    const before = (await api().projects.get(projectId)).productionDeploymentId!;
    const preview = await deployOpen({ branch: 'main', target: 'preview' });
    const { context, page } = await signedIn(owner.token);
    await page.goto(`${s.apiUrl}/deployments/${preview.id}`);
    await page.getByRole('link', { name: 'Promote to production' }).click();
    await expectAccessible(page, 'confirmation page');
    await shot(page, 'confirm');
    await page.getByRole('button', { name: 'Promote to production' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Promoted');
    expect((await api().projects.get(projectId)).productionDeploymentId).toBe(preview.id);

    await page.goto(`${s.apiUrl}/deployments/${before}`);
    await page.getByRole('link', { name: 'Roll back to this deployment' }).click();
    await page.getByRole('button', { name: 'Roll back to this deployment' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Rolled back');
    const project = await api().projects.get(projectId);
    const current = await api().deployments.get(project.productionDeploymentId!);
    expect(current.rollbackTo).toBe(before);
    await context.close();
  });

  it('shows a viewer no buttons that would fail', async () => {
    const production = (await api().projects.get(projectId)).productionDeploymentId!;
    const { context, page } = await signedIn(viewer.token);
    await page.goto(`${s.apiUrl}/deployments/${production}`);
    await page.locator('#status .badge').waitFor();
    expect(await page.locator('.actions').count()).toBe(0);
    expect(await page.getByRole('link', { name: /Promote|Roll back|Redeploy/ }).count()).toBe(0);
    await context.close();
  });

  it('keeps every project tab accessible, with content in it', async () => {
    await api().env.create(projectId, { key: 'API_URL', value: 'https://api.example.com' });
    await api().env.create(projectId, { key: 'TOKEN', value: 'a-secret-value', encrypted: true });
    await api().domains.add(projectId, { domain: 'www.example.com' });
    await api().webhooks.create(projectId, {
      url: `http://127.0.0.1:${gatePort}/hook`,
      events: ['deployment.success'],
      secret: 'sixteen-chars-or-more',
    });
    await api().deployHooks.create(projectId, { name: 'cms', branch: 'main' });
    const { context, page } = await signedIn(owner.token);
    for (const tab of ['domains', 'env', 'webhooks', 'deploy-hooks', 'metrics']) {
      await page.goto(`${s.apiUrl}/projects/${projectId}/${tab}`);
      await page.locator('nav.tabs [aria-current="page"]').first().waitFor();
      await expectAccessible(page, `${tab} tab`);
      await shot(page, tab);
    }
    expect(await page.content()).not.toContain('a-secret-value');
    // A deploy hook made in the page: its URL shown once, with a button that copies it.
    await page.goto(`${s.apiUrl}/projects/${projectId}/deploy-hooks`);
    await page.getByLabel('Name').fill('nightly');
    await page.getByRole('button', { name: 'Make deploy hook' }).click();
    const url = await page.getByLabel('URL').inputValue();
    expect(url).toMatch(/\/v1\/hooks\/deploy\/dph_[a-z0-9]+\.slwh_/);
    expect(await page.getByRole('button', { name: 'Copy URL' }).isVisible()).toBe(true);
    await expectAccessible(page, 'deploy hook made');
    await page.goto(`${s.apiUrl}/projects/${projectId}/deploy-hooks`);
    expect(await page.content()).not.toContain(url.split('.').at(-1)!);
    await context.close();
  });

  it('shows why a build failed, with its log', async () => {
    const broken = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'broken',
          private: true,
          scripts: { build: 'node build.mjs' },
        }),
        'build.mjs':
          "console.error('\\x1b[31mError: cannot find module ./missing\\x1b[0m'); process.exitCode = 1;\n",
      },
    });
    repos.push(broken);
    const project = await api().projects.create({
      name: 'broken',
      repositoryUrl: broken.url,
      organizationId: owner.orgId,
    });
    const d = await api().deployments.create(project.id, {});
    const done = await finished(d.id);
    expect(done.status).toBe('failed');
    const { context, page } = await signedIn(owner.token);
    await page.goto(`${s.apiUrl}/deployments/${d.id}`);
    expect(await page.getByRole('alert').textContent()).toBe(done.errorMessage);
    const line = page.locator('#log li', { hasText: 'cannot find module ./missing' });
    expect(await line.count()).toBe(1);
    expect(await line.locator('span.f31').count()).toBe(1);
    await expectAccessible(page, 'failed deployment page');
    await shot(page, 'failed');

    await page.goto(`${s.apiUrl}/orgs/${(await api().organizations.get(owner.orgId)).name}`);
    await expectAccessible(page, 'organization page');
    await page.goto(`${s.apiUrl}/deployments/dpl_doesnotexist`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
    await expectAccessible(page, 'not-found page');
    await context.close();
  });
});
