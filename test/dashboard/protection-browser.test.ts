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
});
