import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, browserAvailable, launchBrowser } from '../helpers/browser.ts';
import { deploymentRow, storeSite } from '../helpers/edge.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * A protected preview met as a person meets it (docs/protection.md): Chromium opens the preview,
 * is sent to the dashboard, signs in with a token, and lands back on the page it asked for, with
 * a cookie for that host alone.
 */
describe.skipIf(!browserAvailable())('preview protection in a browser', () => {
  let s: Stack;
  let browser: Browser;
  let owner: { token: string; orgId: string; userId: string };
  let projectId = '';
  let previewHost = '';
  let otherHost = '';
  let previewDeploymentId = '';

  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_DEFAULT_PROTECTION: 'previews' } });
    owner = await s.user();
    const project = await s
      .client(owner.token)
      .projects.create({ name: 'secret', organizationId: owner.orgId });
    projectId = project.id;
    const deps = s.running.deps;
    const hosts: string[] = [];
    for (const text of ['<title>preview</title><h1>Preview of secret</h1>', '<h1>another preview</h1>']) {
      const artifactId = await storeSite(deps.config.artifactsDir, {
        'index.html': text,
        'about.html': text,
      });
      const row = deploymentRow(project.id, new Date().toISOString(), {
        target: 'preview',
        branch: 'feature',
        artifact_id: artifactId,
        runtime: JSON.stringify({ kind: 'static', spa: false }),
      });
      await deps.db.insertInto('deployments').values(row).execute();
      hosts.push(`${row.host}.localhost`);
      previewDeploymentId ||= row.id;
    }
    [previewHost, otherHost] = hosts as [string, string];
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
  });

  it('signs in through the dashboard and comes back to the page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const wanted = `http://${previewHost}:${s.edgePort}/about.html?tab=2`;
    await page.goto(wanted);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('API token').fill(owner.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(wanted);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Preview of secret');
    const cookies = await context.cookies(`http://${previewHost}:${s.edgePort}/`);
    const protection = cookies.find((c) => c.name === 'slipway_protection');
    expect(protection).toMatchObject({ domain: previewHost, httpOnly: true, sameSite: 'Lax', path: '/' });
    // Scoped to its host: another preview of the same project asks again (signed in to the
    // dashboard already, the round trip needs no token this time).
    const other = await context.newPage();
    await other.goto(`http://${otherHost}:${s.edgePort}/`);
    await other.waitForURL(`http://${otherHost}:${s.edgePort}/`);
    await expect.poll(() => other.locator('h1').textContent()).toBe('another preview');
    expect((await context.cookies(`http://${otherHost}:${s.edgePort}/`)).map((c) => c.name)).toContain(
      'slipway_protection',
    );
    // A browser without the cookie (a new context) is sent to sign in, not shown the page.
    const stranger = await (await browser.newContext()).newPage();
    await stranger.goto(`http://${previewHost}:${s.edgePort}/`);
    await stranger.waitForURL(/\/sign-in\?next=/);
    expect(await stranger.content()).not.toContain('Preview of secret');
    await context.close();
  });

  it('sets the protection, and shows a new bypass secret once, on the project’s Protection tab', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.apiUrl}/projects/${projectId}/protection`);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('API token').fill(owner.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${s.apiUrl}/projects/${projectId}/protection`);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(await page.getByRole('radio', { name: /Previews:/ }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: /All:/ }).check();
    await page.getByRole('button', { name: 'Save protection' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('applies at once');
    expect((await s.client(owner.token).projects.get(projectId)).protection).toBe('all');
    await page.getByRole('button', { name: 'Make a new bypass secret' }).click();
    const secret = await page.getByRole('textbox', { name: 'Bypass secret' }).inputValue();
    expect(secret).toMatch(/^slwb_/);
    const through = await s.fetchFromEdge(`http://${previewHost}:${s.edgePort}/`, {
      headers: { 'x-slipway-protection-bypass': secret },
    });
    expect(through.status).toBe(200);
    // Shown once: the tab read again has no trace of it.
    await page.goto(`${s.apiUrl}/projects/${projectId}/protection`);
    expect(await page.content()).not.toContain(secret);
    expect(await accessibilityViolations(page)).toEqual([]);
    await context.close();
  });

  it('revokes a share link with its Revoke button, which ends the cookie it set', async () => {
    const client = s.client(owner.token);
    const link = await client.protection.share(projectId, { deploymentId: previewDeploymentId });
    const opened = await s.fetchFromEdge(link.url);
    expect(opened.status).toBe(302);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const visit = () => s.fetchFromEdge(`http://${previewHost}:${s.edgePort}/`, { headers: { cookie } });
    expect((await visit()).status).toBe(200);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.apiUrl}/projects/${projectId}/protection`);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('API token').fill(owner.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${s.apiUrl}/projects/${projectId}/protection`);
    expect(await accessibilityViolations(page)).toEqual([]);
    // The button asks first (data-confirm); the test says yes.
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: `Revoke share link ${link.id}` }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain(`${link.id} revoked`);
    expect(await page.getByRole('button', { name: `Revoke share link ${link.id}` }).count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    const refused = await visit();
    expect(refused.status).toBe(302);
    expect(new URL(refused.headers.get('location')!).pathname).toBe('/protection/sign-in');
    await context.close();
  });

  it('refuses a Revoke post without the dashboard session’s CSRF token', async () => {
    const client = s.client(owner.token);
    const link = await client.protection.share(projectId, { deploymentId: previewDeploymentId });
    const signIn = await fetch(`${s.apiUrl}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: owner.token, next: '/' }),
    });
    const session = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const forged = await fetch(`${s.apiUrl}/projects/${projectId}/protection/links/${link.id}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded', origin: s.apiUrl },
      body: new URLSearchParams({ _csrf: 'wrong' }),
    });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('Form expired');
    expect((await client.protection.links(projectId)).data.map((l) => l.id)).toContain(link.id);
  });
});
