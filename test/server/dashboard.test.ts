import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLog } from '../../server/features/deployments/deployment-logs.ts';
import {
  markBuilding,
  markDeploying,
  markFailed,
  markLive,
} from '../../server/features/deployments/deployment-state.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { insertDeployment } from '../helpers/edge.ts';
import { addMember } from '../helpers/members.ts';

/** The dashboard through inject(): sessions, CSRF, roles, escaping, the API's refusals in words. */
describe('dashboard', () => {
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name: 'site',
      repositoryUrl: 'https://github.com/acme/site.git',
      organizationId: alice.orgId,
    });
    expect(res.status).toBe(201);
    projectId = res.body.data.id;
  });
  afterAll(() => t.close());

  /** Signs in with a token through the form; returns the cookie and the page's CSRF value. */
  async function signIn(user: TestUser | string) {
    const token = typeof user === 'string' ? user : user.token;
    const res = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
      payload: new URLSearchParams({ token, next: '/' }).toString(),
    });
    return res;
  }
  async function session(user: TestUser) {
    const res = await signIn(user);
    expect(res.statusCode).toBe(303);
    const setCookie = String(res.headers['set-cookie']);
    const cookie = setCookie.split(';')[0]!;
    const home = await get(cookie, '/');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)![1]!;
    return { cookie, csrf, setCookie };
  }
  const get = (cookie: string | null, url: string) =>
    t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
  const post = (cookie: string, url: string, form: Record<string, string>, origin = 'http://localhost:80') =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });

  async function deployLive(message?: string) {
    const res = await t.call(
      alice,
      'POST',
      `/v1/projects/${projectId}/deployments`,
      message ? { message } : {},
    );
    expect(res.status).toBe(201);
    const id = res.body.data.id as string;
    await markBuilding(t.deps, id, {
      commitHash: 'abcdef1234567',
      commitMessage: 'Fix <b>bold</b>',
      author: 'a@example.com',
    });
    await appendLog(t.deps, id, 'build', ['\x1b[32mcompiled\x1b[0m ok', 'second <line>']);
    await markDeploying(t.deps, id, { buildDurationMs: 1200, artifactId: `art-${id}` });
    await markLive(t.deps, id, { deployDurationMs: 300 });
    return id;
  }

  it('sends a visitor without a session to sign in, and back where they were going after', async () => {
    const res = await get(null, `/projects/${projectId}?status=live`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(
      `/sign-in?next=${encodeURIComponent(`/projects/${projectId}?status=live`)}`,
    );
    const page = await get(null, String(res.headers.location));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`name="next" value="/projects/${projectId}?status=live"`);
  });

  it('refuses a wrong token with the API’s words and opens an HttpOnly, SameSite session for a right one', async () => {
    const bad = await signIn('slw_' + 'x'.repeat(40));
    expect(bad.statusCode).toBe(401);
    expect(bad.body).toContain('Unknown or revoked API token');
    expect(bad.headers['set-cookie']).toBeUndefined();

    const { setCookie, cookie } = await session(alice);
    expect(setCookie).toMatch(
      /^slipway_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Expires=/,
    );
    expect(setCookie).not.toContain('Secure'); // plain http here; behind https it is Secure (below)
    const home = await get(cookie, '/');
    expect(home.statusCode).toBe(200);
    expect(home.headers['content-security-policy']).toContain("script-src 'self'");
    expect(home.body).toContain('alice@example.com');
    expect(home.body).toContain(`href="/projects/${projectId}"`);
    // Only a hash of the session is stored.
    const rows = await t.deps.db.selectFrom('sessions').select('id_hash').execute();
    expect(rows.map((r) => r.id_hash)).not.toContain(cookie.split('=')[1]);
  });

  it('refuses a sign-in form posted from another site', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      payload: new URLSearchParams({ token: alice.token }).toString(),
    });
    expect(res.statusCode).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('never redirects to another site after signing in', async () => {
    for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
        payload: new URLSearchParams({ token: alice.token, next }).toString(),
      });
      expect(res.headers.location, next).toBe('/');
    }
  });

  it('shows the project with its deployments, escaping what users wrote', async () => {
    const id = await deployLive('<img src=x onerror=alert(1)>');
    const { cookie } = await session(alice);
    const page = await get(cookie, `/projects/${projectId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`href="/deployments/${id}"`);
    expect(page.body).toContain('Fix &lt;b&gt;bold&lt;/b&gt;');
    expect(page.body).not.toContain('<img src=x');
    const d = await get(cookie, `/deployments/${id}`);
    expect(d.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(d.body).toContain('<span class="f32">compiled</span> ok');
    expect(d.body).toContain('second &lt;line&gt;');
    expect(d.body).toContain('href="https://github.com/acme/site/commit/abcdef1234567"');
  });

  it('shows a preview’s branch URL on its page and links the branch to it in the list', async () => {
    const res = await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {
      branch: 'feature/login',
    });
    expect(res.status).toBe(201);
    const preview = res.body.data as { id: string; branchUrl: string };
    expect(preview.branchUrl).toBe('http://site-git-feature-login.localhost:3001');
    const production = await deployLive();
    const { cookie } = await session(alice);
    const page = (await get(cookie, `/deployments/${preview.id}`)).body;
    expect(page).toContain('<dt>Branch URL</dt>');
    expect(page).toContain(`<a href="${preview.branchUrl}">${preview.branchUrl}</a>`);
    expect((await get(cookie, `/deployments/${production}`)).body).not.toContain('Branch URL');
    const list = (await get(cookie, `/projects/${projectId}`)).body;
    expect(list).toContain(
      `<a href="${preview.branchUrl}" title="The newest live preview of feature/login">feature/login</a>`,
    );
  });

  it('pages a list by cursor: older and back to the newest, filters kept, a foreign cursor named', async () => {
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name: 'paged',
      repositoryUrl: 'https://github.com/acme/paged.git',
      organizationId: alice.orgId,
    });
    const paged = res.body.data.id as string;
    const made: string[] = [];
    for (let i = 0; i < 23; i++) {
      const d = await insertDeployment(t, paged, {
        branch: 'main',
        created_at: new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString(),
      });
      made.push(d.id);
    }
    const { cookie } = await session(alice);
    const ids = (body: string) =>
      [...body.matchAll(/href="\/deployments\/(dpl_[A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
    const first = await get(cookie, `/projects/${paged}?branch=main`);
    expect(ids(first.body)).toEqual(made.slice(3).reverse());
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body);
    expect(older?.[1]).toMatch(new RegExp(`^/projects/${paged}\\?branch=main&amp;cursor=`));
    expect(first.body).not.toContain('rel="first"');
    const second = await get(cookie, older![1]!.replaceAll('&amp;', '&'));
    expect(ids(second.body)).toEqual(made.slice(0, 3).reverse());
    expect(second.body).not.toContain('rel="next"');
    expect(second.body).toContain(`<a href="/projects/${paged}?branch=main" rel="first">Newest</a>`);
    const foreign = await get(cookie, `/projects/${paged}?cursor=bm90LW91cnM`);
    expect(foreign.statusCode).toBe(200);
    expect(foreign.body).toMatch(/role="alert">Invalid request: cursor: /);
    expect(ids(foreign.body)).toEqual(made.slice(3).reverse());
  });

  it('neither echoes nor runs a hostile cursor', async () => {
    const { cookie } = await session(alice);
    const script = '"><script>alert(1)</script>';
    // Well-formed base64url of a pair of strings with SQL in them: read as a position, nothing else.
    const sqlish = Buffer.from(JSON.stringify(["2999' or 1=1 --", 'x'])).toString('base64url');
    for (const cursor of [script, sqlish]) {
      for (const url of [`/projects/${projectId}`, `/orgs/${alice.orgId}`]) {
        const page = await get(cookie, `${url}?cursor=${encodeURIComponent(cursor)}`);
        expect(page.statusCode).toBe(200);
        expect(page.body).not.toContain('<script>alert(1)</script>');
        expect(page.body).not.toContain('or 1=1');
      }
    }
    const listed = await t.call(alice, 'GET', `/v1/projects/${projectId}/deployments?cursor=${sqlish}`);
    // A position past every row: this project's deployments from the newest, nothing else.
    expect(listed.status).toBe(200);
    const own = await t.call(alice, 'GET', `/v1/projects/${projectId}/deployments`);
    expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual(
      own.body.data.map((d: { id: string }) => d.id),
    );
  });

  it('names a bad filter in words and keeps what was typed', async () => {
    const { cookie } = await session(alice);
    const page = await get(cookie, `/projects/${projectId}?status=bogus&branch=main`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/role="alert">Invalid request: status: [^<]+/);
    expect(page.body).toContain('name="branch" value="main"');
  });

  it('promotes and rolls back through forms, and refuses a form without the session’s CSRF value', async () => {
    const { cookie, csrf } = await session(alice);
    const first = await deployLive();
    const preview = await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {
      target: 'preview',
      branch: 'feature',
    });
    const pid = preview.body.data.id as string;
    await markBuilding(t.deps, pid, {
      commitHash: '1234567abcdef',
      commitMessage: 'Feature',
      author: 'a@example.com',
    });
    await markDeploying(t.deps, pid, { buildDurationMs: 1, artifactId: `art-${pid}` });
    await markLive(t.deps, pid, { deployDurationMs: 1 });

    const page = await get(cookie, `/deployments/${pid}`);
    expect(page.body).toContain(`href="/deployments/${pid}/promote"`);
    const confirm = await get(cookie, `/deployments/${pid}/promote`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Promote to production?');

    const forged = await post(cookie, `/deployments/${pid}/promote`, { _csrf: 'nope' });
    expect(forged.statusCode).toBe(403);
    const crossSite = await post(
      cookie,
      `/deployments/${pid}/promote`,
      { _csrf: csrf },
      'https://evil.example',
    );
    expect(crossSite.statusCode).toBe(403);
    expect((await t.call(alice, 'GET', `/v1/projects/${projectId}`)).body.data.productionDeploymentId).toBe(
      first,
    );

    const done = await post(cookie, `/deployments/${pid}/promote`, { _csrf: csrf });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`/deployments/${pid}?done=promote`);
    expect((await t.call(alice, 'GET', `/v1/projects/${projectId}`)).body.data.productionDeploymentId).toBe(
      pid,
    );

    // Promoting again is the API's 409, shown in words on the confirmation page.
    const again = await post(cookie, `/deployments/${pid}/promote`, { _csrf: csrf });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain(`Deployment ${pid} is already the production deployment`);

    // Roll back to the first production deployment, by id.
    const back = await post(cookie, `/deployments/${first}/rollback`, { _csrf: csrf });
    expect(back.statusCode).toBe(303);
    const rollbackId = /\/deployments\/([^?]+)\?done=rollback/.exec(String(back.headers.location))![1]!;
    const rb = (await t.call(alice, 'GET', `/v1/deployments/${rollbackId}`)).body.data;
    expect(rb.rollbackTo).toBe(first);
  });

  it('shows a viewer no buttons, and refuses what a viewer may not do', async () => {
    const id = await deployLive();
    const { cookie, csrf } = await session(viewer);
    const page = await get(cookie, `/deployments/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toMatch(/\/(promote|rollback|redeploy)"/);
    const confirm = await get(cookie, `/deployments/${id}/redeploy`);
    expect(confirm.statusCode).toBe(403);
    const res = await post(cookie, `/deployments/${id}/redeploy`, { _csrf: csrf });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('you are viewer');
  });

  it('shows a failed build’s reason, and 404 for what is not yours', async () => {
    const res = await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, {});
    const id = res.body.data.id as string;
    await markBuilding(t.deps, id, {
      commitHash: 'abcdef1234567',
      commitMessage: 'Broken',
      author: 'a@example.com',
    });
    await appendLog(t.deps, id, 'build', ['npm ERR! missing script: build']);
    await markFailed(t.deps, id, 'Build failed: npm run build exited with code 1');
    const { cookie } = await session(alice);
    const page = await get(cookie, `/deployments/${id}`);
    expect(page.body).toContain('role="alert">Build failed: npm run build exited with code 1');
    expect(page.body).toContain('npm ERR! missing script: build');
    expect(page.body).not.toContain('data-stream');

    const stranger = await t.user('stranger@example.com');
    const s = await session(stranger);
    const other = await get(s.cookie, `/deployments/${id}`);
    expect(other.statusCode).toBe(404);
    expect(other.body).toContain(`Deployment ${id} not found`);
  });

  it('ends the session on sign-out and when its token is revoked', async () => {
    const { cookie, csrf } = await session(alice);
    expect((await get(cookie, '/')).statusCode).toBe(200);
    const out = await post(cookie, '/sign-out', { _csrf: csrf });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await get(cookie, '/')).statusCode).toBe(303);

    const other = await t.user('revoked@example.com');
    const s = await session(other);
    expect((await get(s.cookie, '/')).statusCode).toBe(200);
    const tokenId = (await t.call(other, 'GET', '/v1/user/tokens')).body.data[0].id;
    expect((await t.call(other, 'DELETE', `/v1/user/tokens/${tokenId}`)).status).toBe(200);
    expect((await get(s.cookie, '/')).statusCode).toBe(303);
  });

  it('adds, changes and removes environment variables, and never sends a secret’s value', async () => {
    const { cookie, csrf } = await session(alice);
    const path = `/projects/${projectId}/env`;
    const bad = await post(cookie, path, { _csrf: csrf, key: '1BAD', value: 'x', environment: 'production' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/role="alert">Invalid request: key: [^<]+/);
    expect(bad.body).toContain('name="key" value="1BAD"');

    const plain = await post(cookie, path, {
      _csrf: csrf,
      key: 'API_URL',
      value: 'https://api.example.com',
      environment: 'production',
    });
    expect(plain.statusCode).toBe(303);
    const secret = await post(cookie, path, {
      _csrf: csrf,
      key: 'DB_PASSWORD',
      value: 'hunter2-very-secret',
      environment: 'production',
      encrypted: 'on',
    });
    expect(secret.statusCode).toBe(303);
    let page = await get(cookie, path);
    expect(page.body).toContain('https://api.example.com');
    expect(page.body).toContain('secret (hidden)');
    expect(page.body).not.toContain('hunter2-very-secret');

    expect(
      (
        await post(cookie, `${path}/API_URL?environment=production`, {
          _csrf: csrf,
          value: 'https://v2.example.com',
        })
      ).statusCode,
    ).toBe(303);
    expect(
      (await post(cookie, `${path}/DB_PASSWORD?environment=production&op=delete`, { _csrf: csrf }))
        .statusCode,
    ).toBe(303);
    const vars = (await t.call(alice, 'GET', `/v1/projects/${projectId}/env`)).body.data;
    expect(vars.map((v: { key: string; value: string }) => [v.key, v.value])).toEqual([
      ['API_URL', 'https://v2.example.com'],
    ]);

    const v = await session(viewer);
    page = await get(v.cookie, path);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('Add variable');
    const refused = await post(v.cookie, path, {
      _csrf: v.csrf,
      key: 'X',
      value: 'y',
      environment: 'production',
    });
    expect(refused.statusCode).toBe(403);
  });

  it('adds a domain and shows the DNS records to create, and removes it', async () => {
    const { cookie, csrf } = await session(alice);
    const path = `/projects/${projectId}/domains`;
    const bad = await post(cookie, path, { _csrf: csrf, domain: 'not a domain' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('name="domain" value="not a domain"');
    expect((await post(cookie, path, { _csrf: csrf, domain: 'www.example.com' })).statusCode).toBe(303);
    const page = await get(cookie, `${path}?done=added`);
    expect(page.body).toContain('role="status">Added.');
    expect(page.body).toContain('<code>_slipway-challenge.www.example.com</code>');
    expect(page.body).toContain('certificate: pending');
    expect((await post(cookie, `${path}/www.example.com/delete`, { _csrf: csrf })).statusCode).toBe(303);
    expect((await t.call(alice, 'GET', `/v1/projects/${projectId}/domains`)).body.data).toEqual([]);
  });

  it('adds a webhook with the events ticked, never shows its secret, and lists deliveries', async () => {
    const { cookie, csrf } = await session(alice);
    const path = `/projects/${projectId}/webhooks`;
    const form = new URLSearchParams({
      _csrf: csrf,
      url: 'https://hooks.example.com/in',
      secret: 'a-secret-of-sixteen+',
    });
    form.append('events', 'deployment.created');
    form.append('events', 'deployment.success');
    const res = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { cookie, origin: 'http://localhost:80', 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.toString(),
    });
    expect(res.statusCode, res.body.match(/role="alert">([^<]*)/)?.[1]).toBe(303);
    const hooks = (await t.call(alice, 'GET', `/v1/projects/${projectId}/webhooks`)).body.data;
    expect(hooks).toHaveLength(1);
    expect(hooks[0].events).toEqual(['deployment.created', 'deployment.success']);
    const page = await get(cookie, path);
    expect(page.body).toContain('https://hooks.example.com/in');
    expect(page.body).not.toContain('a-secret-of-sixteen+');
    const none = await post(cookie, path, {
      _csrf: csrf,
      url: 'https://hooks.example.com/b',
      secret: 'a-secret-of-sixteen+',
    });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('events: must list at least one event');
  });

  it('makes a deploy hook, shows its URL on that answer only, lists it for members and revokes it', async () => {
    const { cookie, csrf } = await session(alice);
    const path = `/projects/${projectId}/deploy-hooks`;
    const made = await post(cookie, path, { _csrf: csrf, name: 'cms', branch: 'main' });
    expect(made.statusCode, made.body.match(/role="alert">([^<]*)/)?.[1]).toBe(201);
    expect(made.headers['cache-control']).toBe('no-store');
    const url = /id="made-url" class="secret-url" value="([^"]+)"/.exec(made.body)![1]!;
    const secret = /\.(slwh_[A-Za-z0-9_-]+)$/.exec(url)![1]!;
    const [hook] = (await t.call(alice, 'GET', `/v1/projects/${projectId}/deploy-hooks`)).body.data;
    expect(url).toBe(`${hook.urlPrefix}${secret}`);
    // The URL deploys.
    const deployed = await t.app.inject({ method: 'POST', url: new URL(url).pathname });
    expect(deployed.statusCode).toBe(201);

    const page = await get(cookie, path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(hook.urlPrefix);
    expect(page.body).not.toContain(secret);
    expect(page.body).toContain('Revoke cms');
    const { cookie: viewerCookie } = await session(viewer);
    const seen = await get(viewerCookie, path);
    expect(seen.body).toContain('<td data-label="Name">cms</td>');
    expect(seen.body).not.toContain('Make deploy hook');
    expect(seen.body).not.toContain('Revoke cms');

    const refused = await post(cookie, path, { _csrf: csrf, name: 'cms', branch: 'main' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('already has a deploy hook named');
    expect(refused.body).not.toContain('id="made-url"');

    const revoked = await post(cookie, `${path}/${hook.id}/delete`, { _csrf: csrf });
    expect(revoked.statusCode).toBe(303);
    expect((await t.call(alice, 'GET', `/v1/projects/${projectId}/deploy-hooks`)).body.data).toEqual([]);
    expect((await t.app.inject({ method: 'POST', url: new URL(url).pathname })).statusCode).toBe(404);
  });

  it('lets an admin invite a member and change a role, and shows metrics and health', async () => {
    const { cookie, csrf } = await session(alice);
    const org = (await t.call(alice, 'GET', `/v1/organizations/${alice.orgId}`)).body.data.name as string;
    expect(
      (
        await post(cookie, `/orgs/${org}/members`, {
          _csrf: csrf,
          email: 'new@example.com',
          role: 'developer',
        })
      ).statusCode,
    ).toBe(303);
    expect(
      (await post(cookie, `/orgs/${org}/members/new%40example.com`, { _csrf: csrf, role: 'viewer' }))
        .statusCode,
    ).toBe(303);
    const members = (await t.call(alice, 'GET', `/v1/organizations/${alice.orgId}/members`)).body.data;
    expect(members.find((m: { email: string }) => m.email === 'new@example.com').role).toBe('viewer');
    const v = await session(viewer);
    expect((await get(v.cookie, `/orgs/${org}`)).body).not.toContain('Invite');

    const metrics = await get(cookie, `/projects/${projectId}/metrics?period=7d`);
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('Traffic over 7d');
    expect(metrics.body).toMatch(/<svg\s+role="img"\s+aria-label="Requests per hour: \d+ requests/);
    const badPeriod = await get(cookie, `/projects/${projectId}/metrics?period=1y`);
    expect(badPeriod.statusCode).toBe(400);
    expect(badPeriod.body).toContain('period');
  });

  it('serves its script and style compressed, with a content hash and a year of caching', async () => {
    const { cookie } = await session(alice);
    const home = await get(cookie, '/');
    const urls = [...home.body.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br, gzip' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
  });
});

describe('dashboard behind https under a path', () => {
  it('writes links under the public URL’s path and marks the cookie Secure', async () => {
    const t = await createTestApp({ env: { SLIPWAY_PUBLIC_API_URL: 'https://deploy.example.com/slipway' } });
    try {
      const alice = await t.user('alice@example.com');
      const res = await t.app.inject({
        method: 'POST',
        url: '/sign-in',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://deploy.example.com',
        },
        payload: new URLSearchParams({ token: alice.token, next: '/slipway/' }).toString(),
      });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/slipway/');
      expect(String(res.headers['set-cookie'])).toMatch(/Path=\/slipway; HttpOnly; SameSite=Lax; Secure/);
      const cookie = String(res.headers['set-cookie']).split(';')[0]!;
      const home = await t.app.inject({ method: 'GET', url: '/', headers: { cookie } });
      expect(home.body).toContain('href="/slipway/assets/app.css?v=');
    } finally {
      await t.close();
    }
  });
});
