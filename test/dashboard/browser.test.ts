import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { newId } from '../../server/core/ids.ts';
import { accessibilityViolations, browserAvailable, launchBrowser } from '../helpers/browser.ts';
import { edgeRequest } from '../helpers/edge.ts';
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
  /** A second gate, at /second, for a build that must wait while the first one has gone through. */
  let secondOpen = false;
  let gatePort = 0;
  let owner: { token: string; orgId: string; userId: string };
  let viewer: { token: string; orgId: string; userId: string };
  const repos: GitRepo[] = [];
  let projectId: string;

  beforeAll(async () => {
    // A build that waits for the test: the test sees its first lines arrive before it lets it finish.
    gate = createServer((req, res) =>
      res.end((req.url === '/second' ? secondOpen : gateOpen) ? 'go' : 'wait'),
    );
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    gatePort = (gate.address() as AddressInfo).port;
    // One build at a time: a deployment made while another builds is seen queued.
    s = await startStack({
      env: { SLIPWAY_SANDBOX_HOST_PORTS: String(gatePort), SLIPWAY_BUILD_CONCURRENCY: '1' },
    });
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
    const repo = gatedRepo('/');
    repos.push(repo);
    const project = await s
      .client(owner.token)
      .projects.create({ name: 'gated', repositoryUrl: repo.url, organizationId: owner.orgId });
    projectId = project.id;
    browser = await launchBrowser();
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  /** A repository whose build logs a line, then waits until the gate at `path` opens. */
  function gatedRepo(path: string): GitRepo {
    return createGitRepo({
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
          `  const body = await fetch('http://127.0.0.1:${gatePort}${path}').then((r) => r.text(), () => 'wait');\n` +
          "  if (body === 'go') break;\n" +
          '  await new Promise((r) => setTimeout(r, 100));\n' +
          '}\n' +
          "console.log('step two: the gate opened');\n" +
          "mkdirSync('dist', { recursive: true });\n" +
          "writeFileSync('dist/index.html', '<h1>gated ' + (process.env.SLIPWAY_GIT_BRANCH ?? '') + '</h1>');\n",
      },
    });
  }

  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await new Promise((r) => gate?.close(r));
    for (const r of repos) r.remove();
  });

  const api = (token = owner.token) => s.client(token);

  async function signedIn(
    token: string,
    options: Parameters<Browser['newContext']>[0] = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext(options);
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

  const findProject = async (name: string) =>
    (await api().projects.list({ org: owner.orgId, limit: 100 })).data.find((p) => p.name === name)!;

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
    // In the project's list, the rollback and the promoted preview say what they are.
    await page.getByRole('link', { name: 'gated', exact: true }).click();
    const row = (id: string) => page.locator(`tr[data-id="${id}"] .origin`);
    expect(await row(current.id).textContent()).toBe('rollback');
    expect(await row(preview.id).textContent()).toBe('promoted');
    expect(await row(before).count()).toBe(0);
    await context.close();
  });

  it('makes a project with the New project form, follows its first deployment live, and deploys again with the Deploy button', async () => {
    const second = gatedRepo('/second');
    repos.push(second);
    gateOpen = false;
    secondOpen = false;
    // A build that holds the only build slot: the new project's first deployment waits, queued.
    const blocker = await api().deployments.create(projectId, { branch: 'main', target: 'preview' });
    await waitFor(
      'the blocking build to start',
      async () => (await api().deployments.get(blocker.id)).status === 'building',
      60_000,
      100,
    );
    const { context, page } = await signedIn(owner.token);
    await page.getByRole('link', { name: 'New project' }).click();
    await expectAccessible(page, 'new project page');
    await page.getByLabel('Name').fill('clicked');
    // "Empty" hides the repository's fields; "A Git repository" shows them again.
    await page.getByRole('radio', { name: /^Empty/ }).check();
    expect(await page.getByLabel('Repository URL').isVisible()).toBe(false);
    await page.getByRole('radio', { name: 'A Git repository' }).check();
    await page.getByLabel('Repository URL').fill(second.url);
    expect(await page.getByLabel('Deploy the production branch now').isChecked()).toBe(true);
    await shot(page, 'new-project');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/deployments\/dpl_\w+\?done=created$/);
    expect(await page.getByRole('status').first().textContent()).toContain('Project created');
    expect(await page.locator('#status .badge').textContent()).toBe('queued');
    await expectAccessible(page, 'deployment page while queued');
    // From here on the same document: the status changes in place, with no reload.
    await page.evaluate(() => ((globalThis as { sameDocument?: boolean }).sameDocument = true));
    gateOpen = true;
    await page.locator('#status .badge', { hasText: 'building' }).waitFor({ timeout: 60_000 });
    expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
    secondOpen = true;
    await page.locator('#status .badge', { hasText: 'live' }).waitFor({ timeout: 60_000 });
    const first = (await api().deployments.list((await findProject('clicked')).id)).data[0]!;
    expect(first.status).toBe('live');
    expect(await page.getByRole('link', { name: first.url }).count()).toBe(1);

    // The Deploy button: a branch, without the build cache.
    await page.getByRole('link', { name: 'clicked', exact: true }).click();
    await page.getByText('Deploy', { exact: true }).click();
    await expectAccessible(page, 'project page with the Deploy form open');
    await shot(page, 'deploy');
    await page.getByLabel('Use the build cache').uncheck();
    await page.getByRole('button', { name: 'Deploy now' }).click();
    await page.waitForURL(/\/deployments\/dpl_\w+\?done=deploy$/);
    expect(await page.getByRole('status').first().textContent()).toContain('Deployment started');
    await page.locator('#status .badge', { hasText: 'live' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#log li', { hasText: 'Build cache: off for this deployment' }).count()).toBe(
      1,
    );

    // The home page's card shows that newest deployment.
    await page.goto(`${s.apiUrl}/`);
    const newest = (await api().deployments.list((await findProject('clicked')).id)).data[0]!;
    const card = page.locator('.card', { has: page.getByRole('link', { name: 'clicked', exact: true }) });
    expect(await card.locator(`[data-latest="${newest.id}"] .badge`).first().textContent()).toBe('live');
    await expectAccessible(page, 'home page with cards');
    await shot(page, 'home');
    await context.close();
  }, 240_000);

  it('reflows every page on a 390 px phone: nothing scrolls sideways, and each stays accessible', async () => {
    const { context, page } = await signedIn(owner.token, { viewport: { width: 390, height: 844 } });
    const production = (await api().projects.get(projectId)).productionDeploymentId!;
    const org = (await api().organizations.get(owner.orgId)).name;
    const pages = [
      '/',
      '/new',
      `/projects/${projectId}`,
      `/projects/${projectId}/domains`,
      `/projects/${projectId}/env`,
      `/projects/${projectId}/webhooks`,
      `/projects/${projectId}/deploy-hooks`,
      `/projects/${projectId}/metrics?period=7d`,
      `/deployments/${production}`,
      `/orgs/${org}`,
    ];
    for (const path of pages) {
      await page.goto(`${s.apiUrl}${path}`);
      const width = await page.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
            .documentElement.scrollWidth,
      );
      expect(width, `${path} is ${width} px wide`).toBeLessThanOrEqual(390);
      await expectAccessible(page, `${path} at 390 px`);
    }
    // A row of the deployments table says what each of its cells is.
    await page.goto(`${s.apiUrl}/projects/${projectId}`);
    const cell = page.locator(`tr[data-id="${production}"] td[data-label="Commit"]`);
    const before = await cell.evaluate(
      (td) =>
        (
          globalThis as unknown as {
            getComputedStyle: (e: unknown, pseudo: string) => { content: string };
          }
        ).getComputedStyle(td, '::before').content,
    );
    expect(before).toBe('"Commit: "');
    await shot(page, 'phone');
    await context.close();
  });

  it('keeps a first visit of the project page under 100 KB, everything it loads included', async () => {
    const { context } = await signedIn(owner.token);
    // A new context: nothing cached. Bytes as sent over the wire (compressed), headers included.
    const cold = await browser.newContext({ storageState: await context.storageState() });
    const tab = await cold.newPage();
    const sizes: Promise<number>[] = [];
    tab.on('requestfinished', (req) =>
      sizes.push(req.sizes().then((sz) => sz.responseBodySize + sz.responseHeadersSize)),
    );
    await tab.goto(`${s.apiUrl}/projects/${projectId}`, { waitUntil: 'load' });
    const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    expect(bytes).toBeLessThan(100 * 1024);
    await cold.close();
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
    // Traffic for the metrics tab's charts: requests to the production URL, counted by the edge.
    const site = (await api().projects.get(projectId)).deploymentUrl!;
    for (let i = 0; i < 5; i++) {
      expect((await edgeRequest(s.edgePort, new URL(site).host, '/')).status).toBe(200);
    }
    await waitFor(
      'the edge to count the requests',
      async () =>
        ((await api().monitoring.metrics(projectId, { period: '24h' })).metrics.requests?.total ?? 0) >= 5,
      30_000,
      200,
    );
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
    // The metrics tab (the last one visited) drew the hour of those requests.
    expect(
      Number(await page.locator('.series-data td[data-label="Requests"]').last().textContent()),
    ).toBeGreaterThanOrEqual(5);
    expect(
      await page.locator('svg[role="img"][aria-label^="Requests per hour: "]').getAttribute('aria-label'),
    ).toMatch(/^Requests per hour: \d+ requests, at most \d+ in the hour from /);
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
