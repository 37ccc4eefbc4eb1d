import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../action/health-check.ts';
import { httpProbe } from '../../action/http-probe.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { newId } from '../../server/core/ids.ts';
import { redactUrl } from '../../server/core/redact-url.ts';
import { pruneProtection } from '../../server/features/serving/edge/protection-lookups.ts';
import { ManualClock } from '../helpers/clock.ts';
import type { DeploymentsTable } from '../../server/platform/store/schema.ts';
import { deploymentRow, storeSite, upgradeStatus as upgradeAt } from '../helpers/edge.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const BYPASS = 'x-slipway-protection-bypass';

/** Runs the line of docs/protection.md that starts with `start`, exactly as written, in bash; answers its stdout. */
async function runDocLine(start: string, env: Record<string, string>): Promise<string> {
  const doc = readFileSync(new URL('../../docs/protection.md', import.meta.url), 'utf8');
  const line = doc.split('\n').find((l) => l.startsWith(start));
  expect(line, `a line of docs/protection.md starting with ${start}`).toBeDefined();
  const { stdout } = await promisify(execFile)('bash', ['-c', line!], {
    env: { PATH: process.env.PATH, ...env },
  });
  return stdout;
}

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

  /** Inserts a live deployment of a site (one page of `text`, or `files`); answers its host with the edge's port. */
  async function live(
    projectId: string,
    target: 'production' | 'preview',
    text: string | Record<string, string>,
  ): Promise<string> {
    const deps = s.running.deps;
    const files = typeof text === 'string' ? { 'index.html': text } : text;
    const artifactId = await storeSite(deps.config.artifactsDir, files);
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
  const upgradeStatus = (host: string) => upgradeAt(s.edgePort, host);

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

  it('keeps the edge’s own pages of a protected host behind the gate: no state, commit or error', async () => {
    const db = s.running.deps.db;
    const client = s.client(owner.token);
    const now = clock.now().toISOString();
    const commit = `c0ffee${'5'.repeat(34)}`;
    const error = 'npm ERR! missing script: build (internal-detail-4711)';
    /** A deployment of `projectId` that is not live; answers it and its host with the edge's port. */
    async function notLive(projectId: string, values: Partial<DeploymentsTable>) {
      const row = deploymentRow(projectId, now, {
        target: 'preview',
        branch: 'feature',
        commit_hash: commit,
        ...values,
      });
      await db.insertInto('deployments').values(row).execute();
      return { row, host: `${row.host}.localhost:${s.edgePort}` };
    }
    const building = await notLive(a.id, { status: 'building' });
    const queued = await notLive(a.id, { status: 'queued' });
    const failed = await notLive(a.id, { status: 'failed', error_message: error });
    // A branch URL whose branch has no live preview yet.
    await db
      .insertInto('branch_aliases')
      .values({
        project_id: a.id,
        branch: 'waiting',
        host: 'guarded-git-waiting',
        deployment_id: null,
        deployment_seq: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    // A suspended project's preview, and a production URL with nothing live under `all`.
    const paused = await client.projects.create({ name: 'paused', organizationId: owner.orgId });
    const pausedHost = await live(paused.id, 'preview', 'paused preview');
    await db.updateTable('projects').set({ status: 'suspended' }).where('id', '=', paused.id).execute();
    const empty = await client.projects.create({
      name: 'empty',
      organizationId: owner.orgId,
      protection: 'all',
    });
    const emptyHost = await db
      .selectFrom('projects')
      .select('production_host')
      .where('id', '=', empty.id)
      .executeTakeFirstOrThrow();
    const pages: Record<string, string> = {
      building: building.host,
      queued: queued.host,
      failed: failed.host,
      branch: `guarded-git-waiting.localhost:${s.edgePort}`,
      suspended: pausedHost,
      noProduction: `${emptyHost.production_host}.localhost:${s.edgePort}`,
    };
    const leaks = [
      building.row.id,
      queued.row.id,
      failed.row.id,
      commit.slice(0, 7),
      'internal-detail',
      'npm ERR',
      'build log',
      'building',
      'queued',
      'failed',
      'suspended',
      'no live',
      'not live',
      'runtime log',
    ];
    // What a live protected preview answers a visitor without access: every page must look the same.
    const refusal = await edge(hosts.preview, '/some/page?x=1', {}, 'POST');
    const refusalBody = await refusal.text();
    expect(refusal.status).toBe(401);
    for (const [what, host] of Object.entries(pages)) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        const res = await edge(host, '/some/page?x=1', {}, method);
        const body = await res.text();
        expect({ what, method, status: res.status }).toEqual({
          what,
          method,
          status: method === 'POST' ? 401 : 302,
        });
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(res.headers.get('x-slipway-protection')).toBe('sign-in');
        expect(res.headers.get('x-slipway-deployment')).toBeNull();
        expect(res.headers.get('retry-after')).toBeNull();
        if (method === 'GET') {
          const to = new URL(res.headers.get('location')!);
          expect(to.pathname).toBe('/protection/sign-in');
          expect(to.searchParams.get('url')).toBe(`http://${host}/some/page?x=1`);
          expect(body).toBe('');
        }
        if (method === 'POST') expect(body).toBe(refusalBody);
        for (const leak of leaks) expect(body.toLowerCase()).not.toContain(leak.toLowerCase());
      }
    }
    // WebSocket upgrades are refused alike, never told "not found".
    expect(await upgradeStatus(building.host)).toBe(401);

    // A member signs in through the dashboard there as on a live preview, and then sees the page.
    const seen = await edge(building.host, '/', { cookie: await cookieFor(owner.token, building.host) });
    expect(seen.status).toBe(503);
    expect(seen.headers.get('x-slipway-deployment')).toBe(building.row.id);
    expect(seen.headers.get('cache-control')).toBe('private, no-store');
    expect(await seen.text()).toContain(`Deployment ${building.row.id} is building`);
    const waiting = await edge(pages.branch!, '/', { cookie: await cookieFor(owner.token, pages.branch!) });
    expect(waiting.status).toBe(404);
    expect(await waiting.text()).toContain('No live preview of this branch yet');
    const gone = await edge(pages.noProduction!, '/', {
      cookie: await cookieFor(owner.token, pages.noProduction!),
    });
    expect(await gone.text()).toContain('no live production deployment yet');
    // A share link to a deployment still building opens its page too.
    const link = await client.protection.share(a.id, { deploymentId: failed.row.id });
    const shared = new URL(link.url);
    const opened = await edge(failed.host, `${shared.pathname}${shared.search}`);
    expect(opened.status).toBe(302);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await edge(failed.host, '/', { cookie })).text()).toContain(
      `Deployment ${failed.row.id} failed`,
    );
    await client.protection.revokeLink(a.id, link.id);

    // Unprotected projects' pages are as before: public words, `no-store`.
    const open = await client.projects.create({
      name: 'open',
      organizationId: owner.orgId,
      protection: 'none',
    });
    const openBuilding = await notLive(open.id, { status: 'building' });
    const plain = await edge(openBuilding.host);
    expect(plain.status).toBe(503);
    expect(plain.headers.get('cache-control')).toBe('no-store');
    expect(plain.headers.get('x-slipway-deployment')).toBe(openBuilding.row.id);
    expect(await plain.text()).toContain(`Deployment ${openBuilding.row.id} is building`);
    expect(await upgradeStatus(openBuilding.host)).toBe(404);
  });

  it('makes every answer private once past the gate; the gate’s own answers are no-store; public hosts unchanged', async () => {
    const client = s.client(owner.token);
    const site = {
      'index.html': 'home',
      'assets/app-3f2a1b9c.js': 'console.log(1)',
      'cdn/page.html': 'cdn page',
      _headers: [
        '/cdn/*',
        '  Cache-Control: public, s-maxage=600, max-age=60',
        '  CDN-Cache-Control: max-age=600',
        '  Surrogate-Control: max-age=600',
        '',
      ].join('\n'),
      _redirects: '/old /index.html 301\n',
    };
    const guardedHost = await live(a.id, 'preview', site);
    const open = await client.projects.create({
      name: 'open-site',
      organizationId: owner.orgId,
      protection: 'none',
    });
    const openHost = await live(open.id, 'preview', site);

    // The gate's own answers: never kept anywhere.
    expect((await edge(guardedHost)).headers.get('cache-control')).toBe('no-store');
    expect((await edge(guardedHost, '/', {}, 'POST')).headers.get('cache-control')).toBe('no-store');
    const signedIn = await cookieFor(owner.token, guardedHost);

    const cases: [path: string, status: number, guarded: string, open: string][] = [
      ['/', 200, 'private, max-age=0, must-revalidate', 'public, max-age=0, must-revalidate'],
      [
        '/assets/app-3f2a1b9c.js',
        200,
        'private, max-age=31536000, immutable',
        'public, max-age=31536000, immutable',
      ],
      ['/cdn/page.html', 200, 'private, max-age=60', 'public, s-maxage=600, max-age=60'],
      ['/old', 301, 'private, max-age=0, must-revalidate', 'public, max-age=0, must-revalidate'],
      ['/missing', 404, 'private, no-store', 'no-store'],
    ];
    const bypass = (await client.protection.rotateBypass(a.id)).secret;
    for (const [path, status, guarded, public_] of cases) {
      for (const headers of [{ cookie: signedIn }, { [BYPASS]: bypass }] as Record<string, string>[]) {
        for (const method of ['GET', 'HEAD']) {
          const res = await edge(guardedHost, path, headers, method);
          expect({ path, method, status: res.status, cc: res.headers.get('cache-control') }).toEqual({
            path,
            method,
            status,
            cc: guarded,
          });
          expect(res.headers.get('cdn-cache-control')).toBeNull();
          expect(res.headers.get('surrogate-control')).toBeNull();
        }
      }
      const plain = await edge(openHost, path);
      expect({ path, status: plain.status, cc: plain.headers.get('cache-control') }).toEqual({
        path,
        status,
        cc: public_,
      });
    }
    // As docs/protection.md shows it.
    const shown = await runDocLine('curl -sI', {
      SLIPWAY_PROTECTION_BYPASS: bypass,
      PREVIEW_URL: `http://${guardedHost}/`,
    });
    expect(shown).toBe('cache-control: private, max-age=0, must-revalidate\r\n');
    // A revalidation is private too; an unprotected host's CDN fields are left as the site set them.
    const first = await edge(guardedHost, '/', { cookie: signedIn });
    const again = await edge(guardedHost, '/', {
      cookie: signedIn,
      'if-none-match': first.headers.get('etag')!,
    });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate');
    expect((await edge(openHost, '/cdn/page.html')).headers.get('cdn-cache-control')).toBe('max-age=600');
    // Production stays public under `previews`, and so does its caching.
    expect((await edge(hosts.production)).headers.get('cache-control')).toBe(
      'public, max-age=0, must-revalidate',
    );
  });

  it('ends the cookies of a revoked share link at once', async () => {
    const client = s.client(owner.token);
    const previewId = (
      await s.running.deps.db
        .selectFrom('deployments')
        .select('id')
        .where('host', '=', hosts.preview2.split('.')[0]!)
        .executeTakeFirstOrThrow()
    ).id;
    // The edge has the host's routes cached from earlier requests: a new link opens at once all the same.
    expect((await edge(hosts.preview2)).status).toBe(302);
    const link = await client.protection.share(a.id, { deploymentId: previewId, expiresInHours: 24 });
    const url = new URL(link.url);
    const opened = await edge(hosts.preview2, `${url.pathname}${url.search}`);
    expect(opened.status).toBe(302);
    expect(opened.headers.get('cache-control')).toBe('no-store');
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await edge(hosts.preview2, '/', { cookie })).text()).toBe('second preview of a');
    // The same token on the project's other preview: a cookie of its own.
    const elsewhere = await edge(hosts.preview, `${url.pathname}${url.search}`);
    const other = elsewhere.headers.get('set-cookie')!.split(';')[0]!;
    expect((await edge(hosts.preview, '/', { cookie: other })).status).toBe(200);

    // Revoked as docs/protection.md shows.
    const revoked = await runDocLine('curl -s -X DELETE', {
      API: `${s.apiUrl}/v1`,
      AUTH: `Authorization: Bearer ${owner.token}`,
      PROJECT: a.id,
      LINK: link.id,
    });
    expect(JSON.parse(revoked)).toEqual({ success: true, message: `Share link ${link.id} revoked` });
    for (const [host, c] of [
      [hosts.preview2, cookie],
      [hosts.preview, other],
    ] as const) {
      const refused = await edge(host, '/', { cookie: c });
      expect(refused.status).toBe(302);
      expect(new URL(refused.headers.get('location')!).pathname).toBe('/protection/sign-in');
      expect(await refused.text()).not.toContain('preview of a');
    }
    expect((await edge(hosts.preview2, `${url.pathname}${url.search}`)).status).toBe(403);
    // A member's sign-in is not a share link's: it still opens the host.
    expect(
      (await edge(hosts.preview2, '/', { cookie: await cookieFor(owner.token, hosts.preview2) })).status,
    ).toBe(200);
  });

  it('ends a removed member’s sign-in cookies at once; another member’s still open the host', async () => {
    const client = s.client(owner.token);
    const email = `leaving-${Date.now()}@example.com`;
    const leaving = await s.user(email);
    await client.organizations.members.invite(owner.orgId, { email, role: 'developer' });
    // Cached routes from earlier requests list the organization's members as they were: the
    // newcomer's cookie opens the host all the same (the sign-in makes the edge read them again).
    expect((await edge(hosts.preview, '/')).status).toBe(302);
    const theirs = await cookieFor(leaving.token, hosts.preview);
    const ours = await cookieFor(owner.token, hosts.preview);
    expect(await (await edge(hosts.preview, '/', { cookie: theirs })).text()).toBe('preview of a');
    const theirs2 = await cookieFor(leaving.token, hosts.preview2);
    expect((await edge(hosts.preview2, '/', { cookie: theirs2 })).status).toBe(200);

    await client.organizations.members.remove(owner.orgId, email);
    for (const [host, c] of [
      [hosts.preview, theirs],
      [hosts.preview2, theirs2],
    ] as const) {
      const refused = await edge(host, '/', { cookie: c });
      expect(refused.status).toBe(302);
      expect(new URL(refused.headers.get('location')!).pathname).toBe('/protection/sign-in');
      expect(await refused.text()).toBe('');
      const posted = await edge(host, '/', { cookie: c }, 'POST');
      expect(posted.status).toBe(401);
    }
    // Nor can they sign in again: the dashboard refuses them a code.
    const again = await dashboardSignIn(await session(leaving.token), `http://${hosts.preview}/`);
    expect(again.status).toBe(403);
    // The member who stays keeps the way in.
    expect(await (await edge(hosts.preview, '/', { cookie: ours })).text()).toBe('preview of a');
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
    // Deployments say whether their URLs are protected (what the bot's comment reads).
    const listed = async () => (await s.client(owner.token).deployments.list(a.id, { limit: 100 })).data;
    expect(new Set((await listed()).map((d) => d.protected))).toEqual(new Set([true]));
    await s.client(owner.token).projects.update(a.id, { protection: 'none' });
    expect(await (await edge(hosts.preview)).text()).toBe('preview of a');
    expect(new Set((await listed()).map((d) => d.protected))).toEqual(new Set([false]));
    const one = (await listed())[0]!;
    expect((await s.client(owner.token).deployments.get(one.id)).protected).toBe(false);
  });

  it('forgets spent codes at once and expired share links after a day', async () => {
    const db = s.running.deps.db;
    // The codes of the tests above, spent or not, are a minute old at most.
    clock.advance(61_000);
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
