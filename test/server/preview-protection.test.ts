import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../action/health-check.ts';
import { httpProbe } from '../../action/http-probe.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { newId } from '../../server/lib/ids.ts';
import { redactUrl } from '../../server/lib/redact-url.ts';
import { pruneProtection } from '../../server/edge/protection-lookups.ts';
import { ManualClock } from '../helpers/clock.ts';
import { deploymentRow, storeSite } from '../helpers/edge.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const BYPASS = 'x-slipway-protection-bypass';

/**
 * Preview protection through the whole service (docs/protection.md): real API, dashboard and
 * edge on 127.0.0.1, requests with Host headers as a browser or a script sends them.
 */
describe('preview protection', () => {
  const clock = new ManualClock(new Date().toISOString());
  let s: Stack;
  let owner: { token: string; orgId: string; userId: string };
  let outsider: { token: string; orgId: string; userId: string };
  let a: Project;
  let b: Project;
  /** Hosts (with the edge's port) of project a's production (URL, deployment's own URL, custom domain) and two previews; b's preview. */
  const hosts = {
    production: '',
    productionDeployment: '',
    preview: '',
    preview2: '',
    domain: '',
    bPreview: '',
  };

  /** Inserts a live deployment of a one-page site; answers its host with the edge's port. */
  async function live(projectId: string, target: 'production' | 'preview', text: string): Promise<string> {
    const deps = s.running.deps;
    const artifactId = await storeSite(deps.config.artifactsDir, { 'index.html': text });
    const row = deploymentRow(projectId, clock.now().toISOString(), {
      target,
      branch: target === 'production' ? 'main' : 'feature',
      artifact_id: artifactId,
      runtime: JSON.stringify({ kind: 'static', spa: false }),
    });
    await deps.db.insertInto('deployments').values(row).execute();
    if (target === 'production') {
      await deps.db
        .updateTable('projects')
        .set({ production_deployment_id: row.id })
        .where('id', '=', projectId)
        .execute();
    }
    return `${row.host}.localhost:${s.edgePort}`;
  }

  const edge = (host: string, path = '/', headers: Record<string, string> = {}, method = 'GET') =>
    s.fetchFromEdge(`http://${host}${path}`, { headers, method });

  /** A dashboard session's cookie for a token, as the sign-in form makes it. */
  async function session(token: string): Promise<string> {
    const res = await fetch(`${s.apiUrl}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, next: '/' }),
    });
    expect(res.status).toBe(303);
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }

  /** The dashboard's answer to a protected page's sign-in, for a signed-in session. */
  const dashboardSignIn = (cookie: string, pageUrl: string) =>
    fetch(`${s.apiUrl}/protection/sign-in?url=${encodeURIComponent(pageUrl)}`, {
      redirect: 'manual',
      headers: { cookie },
    });

  /** Where the dashboard's page sends the browser on (its refresh, and its link). */
  async function onward(res: Response): Promise<URL> {
    expect(res.status).toBe(200);
    const page = await res.text();
    const to = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&');
    expect(page).toContain(`href="${to.replaceAll('&', '&amp;')}"`);
    return new URL(to);
  }

  /** Signs in as `token` for `host` and answers the protection cookie the edge set. */
  async function cookieFor(token: string, host: string, path = '/'): Promise<string> {
    const to = await onward(await dashboardSignIn(await session(token), `http://${host}${path}`));
    expect(to.host).toBe(host);
    const back = await edge(host, `${to.pathname}${to.search}`);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(path);
    return back.headers.get('set-cookie')!.split(';')[0]!;
  }

  beforeAll(async () => {
    s = await startStack({ clock, env: { SLIPWAY_DEFAULT_PROTECTION: 'previews' } });
    owner = await s.user();
    outsider = await s.user();
    a = await s.client(owner.token).projects.create({ name: 'guarded', organizationId: owner.orgId });
    b = await s.client(owner.token).projects.create({ name: 'other', organizationId: owner.orgId });
    // Production's own deployment URL is a per-deployment URL: protected like a preview's.
    hosts.productionDeployment = await live(a.id, 'production', 'production of a');
    const { production_host } = await s.running.deps.db
      .selectFrom('projects')
      .select('production_host')
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    hosts.production = `${production_host}.localhost:${s.edgePort}`;
    hosts.preview = await live(a.id, 'preview', 'preview of a');
    hosts.preview2 = await live(a.id, 'preview', 'second preview of a');
    hosts.bPreview = await live(b.id, 'preview', 'preview of b');
    const now = clock.now().toISOString();
    await s.running.deps.db
      .insertInto('domains')
      .values({
        id: newId('dom'),
        project_id: a.id,
        domain: 'www.guarded.test',
        status: 'verified',
        ssl_status: 'pending',
        ssl_error: null,
        verification_token: 'x',
        verified_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute();
    hosts.domain = `www.guarded.test:${s.edgePort}`;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('protects new projects’ previews by default; production and its custom domains stay public', async () => {
    expect(a.protection).toBe('previews');
    expect(a.protectionBypassCreatedAt).toBeNull();
    const preview = await edge(hosts.preview, '/docs?x=1');
    expect(preview.status).toBe(302);
    expect(preview.headers.get('cache-control')).toBe('no-store');
    const to = new URL(preview.headers.get('location')!);
    expect(to.pathname).toBe('/protection/sign-in');
    expect(to.searchParams.get('url')).toBe(`http://${hosts.preview}/docs?x=1`);
    expect(await preview.text()).not.toContain('preview of a');
    // Not a page load: a plain refusal, with no redirect to follow.
    const post = await edge(hosts.preview, '/', {}, 'POST');
    expect(post.status).toBe(401);
    expect(await (await edge(hosts.production)).text()).toBe('production of a');
    expect(await (await edge(hosts.domain)).text()).toBe('production of a');
    expect((await edge(hosts.productionDeployment)).status).toBe(302);
  });

  it('signs a member in through the dashboard, with a cookie for that host alone', async () => {
    const cookie = await cookieFor(owner.token, hosts.preview, '/index.html?from=link');
    const ok = await edge(hosts.preview, '/', { cookie });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('preview of a');
    // Host-scoped: the same project's other preview, and another project, ask to sign in again.
    expect((await edge(hosts.preview2, '/', { cookie })).status).toBe(302);
    expect((await edge(hosts.bPreview, '/', { cookie })).status).toBe(302);
    // A forged or altered cookie opens nothing.
    const [name, value] = cookie.split('=') as [string, string];
    const tampered = `${name}=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await edge(hosts.preview, '/', { cookie: tampered })).status).toBe(302);
  });

  it('refuses a replayed code, a code for another host, and anyone outside the organization', async () => {
    const to = await onward(await dashboardSignIn(await session(owner.token), `http://${hosts.preview}/`));
    const path = `${to.pathname}${to.search}`;
    // Taken to the second preview of the same project: refused (and spent).
    expect((await edge(hosts.preview2, path)).status).toBe(403);
    expect((await edge(hosts.preview, path)).status).toBe(403);
    const url = await onward(await dashboardSignIn(await session(owner.token), `http://${hosts.preview}/`));
    expect((await edge(hosts.preview, `${url.pathname}${url.search}`)).status).toBe(302);
    const replay = await edge(hosts.preview, `${url.pathname}${url.search}`);
    expect(replay.status).toBe(403);
    expect(replay.headers.get('set-cookie')).toBeNull();
    // Someone signed in who is not a member gets words, and no code.
    const stranger = await dashboardSignIn(await session(outsider.token), `http://${hosts.preview}/`);
    expect(stranger.status).toBe(403);
    expect(await stranger.text()).toContain('is not a member of the organization');
    // The dashboard sends codes only to protected hosts: not to production, not elsewhere.
    expect((await dashboardSignIn(await session(owner.token), `http://${hosts.production}/`)).status).toBe(
      404,
    );
    expect((await dashboardSignIn(await session(owner.token), 'https://evil.example/')).status).toBe(404);
    // The code and a share link's token never reach a log line.
    expect(redactUrl(path)).not.toContain(url.searchParams.get('code')!);
  });

  it('opens a share link without an account until it expires', async () => {
    const client = s.client(owner.token);
    const previewId = (
      await s.running.deps.db
        .selectFrom('deployments')
        .select('id')
        .where('host', '=', hosts.preview.split('.')[0]!)
        .executeTakeFirstOrThrow()
    ).id;
    const link = await client.protection.share(a.id, { deploymentId: previewId, expiresInHours: 2 });
    const url = new URL(link.url);
    expect(url.host).toBe(hosts.preview);
    const opened = await edge(hosts.preview, `${url.pathname}${url.search}`);
    expect(opened.status).toBe(302);
    expect(opened.headers.get('location')).toBe('/');
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await edge(hosts.preview, '/', { cookie })).text()).toBe('preview of a');
    // The token is not shown again.
    const listed = await client.protection.links(a.id);
    expect(JSON.stringify(listed)).not.toContain(url.searchParams.get('token')!);
    expect(redactUrl(link.url)).not.toContain(url.searchParams.get('token')!);
    // Another project's host does not take it.
    expect((await edge(hosts.bPreview, `${url.pathname}${url.search}`)).status).toBe(403);
    // An hour and a bit on: the cookie it set has run out; the link still opens the page.
    clock.advance(61 * 60_000);
    expect((await edge(hosts.preview, '/', { cookie })).status).toBe(302);
    expect((await edge(hosts.preview, `${url.pathname}${url.search}`)).status).toBe(302);
    // Past the link's end: refused.
    clock.advance(60 * 60_000);
    const late = await edge(hosts.preview, `${url.pathname}${url.search}`);
    expect(late.status).toBe(403);
    expect(late.headers.get('set-cookie')).toBeNull();
  });

  it('lets automation through with the bypass secret, shown once and never again', async () => {
    const client = s.client(owner.token);
    const made = await client.protection.rotateBypass(a.id);
    expect(made.secret).toMatch(/^slwb_[A-Za-z0-9_-]{43}$/);
    const ok = await edge(hosts.preview, '/', { [BYPASS]: made.secret });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('preview of a');
    expect((await edge(hosts.preview, '/', { [BYPASS]: `${made.secret}x` })).status).toBe(302);
    expect((await edge(hosts.bPreview, '/', { [BYPASS]: made.secret })).status).toBe(302);
    const read = await client.projects.get(a.id);
    expect(read.protectionBypassCreatedAt).toBe(made.createdAt);
    expect(JSON.stringify(read)).not.toContain(made.secret);
    expect(JSON.stringify(await client.projects.list({}))).not.toContain(made.secret);
    // The Action's health check: told the deployment is protected without it, passes with it.
    const check = (headers?: Record<string, string>) =>
      checkHealth(`http://${hosts.preview}/`, {
        probe: httpProbe,
        sleep: async () => {},
        attempts: 1,
        ...(headers ? { headers } : {}),
      });
    const refused = await check();
    expect(refused.ok).toBe(false);
    expect(refused.detail).toContain('HTTP 302: the deployment is protected');
    expect(refused.detail).toContain('protection-bypass');
    expect(await check({ [BYPASS]: made.secret })).toMatchObject({ ok: true, detail: 'HTTP 200' });
    // Rotated: the old one stops at once.
    const next = await client.protection.rotateBypass(a.id);
    expect((await edge(hosts.preview, '/', { [BYPASS]: made.secret })).status).toBe(302);
    expect((await edge(hosts.preview, '/', { [BYPASS]: next.secret })).status).toBe(200);
  });

  it('takes the setting from admins only; `all` protects production, `none` nothing', async () => {
    const developer = await s.user();
    const now = clock.now().toISOString();
    await s.running.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: owner.orgId,
        email: 'dev@example.com',
        user_id: developer.userId,
        role: 'developer',
        invited_at: now,
        joined_at: now,
      })
      .execute();
    await expect(
      s.client(developer.token).projects.update(a.id, { protection: 'none' }),
    ).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      s.client(owner.token).projects.update(a.id, { protection: 'sometimes' as 'none' }),
    ).rejects.toMatchObject({ status: 400 });
    expect((await s.client(owner.token).projects.update(a.id, { protection: 'all' })).protection).toBe('all');
    expect((await edge(hosts.production)).status).toBe(302);
    expect((await edge(hosts.domain)).status).toBe(302);
    await s.client(owner.token).projects.update(a.id, { protection: 'none' });
    expect(await (await edge(hosts.preview)).text()).toBe('preview of a');
  });

  it('forgets spent codes at once and expired share links after a day', async () => {
    const db = s.running.deps.db;
    expect((await db.selectFrom('protection_codes').select('code_hash').execute()).length).toBeGreaterThan(0);
    expect((await db.selectFrom('protection_links').select('id').execute()).length).toBe(1);
    await pruneProtection(s.running.deps);
    expect(await db.selectFrom('protection_codes').select('code_hash').execute()).toEqual([]);
    expect((await db.selectFrom('protection_links').select('id').execute()).length).toBe(1);
    clock.advance(25 * 3600_000);
    await pruneProtection(s.running.deps);
    expect(await db.selectFrom('protection_links').select('id').execute()).toEqual([]);
  });
});
