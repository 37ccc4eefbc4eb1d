import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver } from '../../../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer } from '../../../server/features/serving/edge/server.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { edgeRequest, insertDeployment, insertProject, listen, storeSite } from '../../helpers/edge.ts';

const INDEX = '<!doctype html><h1>home</h1>';
const ABOUT = '<!doctype html><h1>about</h1>';
const DOCS = '<!doctype html><h1>docs</h1>';
const APP = '<!doctype html><div id="app"></div>';
const NOT_FOUND = '<!doctype html><h1>site 404</h1>';
const EN_NOT_FOUND = '<!doctype html><h1>English 404</h1>';
const EN_INDEX = '<!doctype html><h1>English</h1>';
const CSS = 'body { color: #333; }';

const REDIRECTS = `# Moved sections
/old-blog/*   /blog/:splat      302
/users/:id    /profile/:id
/about        /moved-about      301
/docs         /documentation    301!
/legacy       /about            308
/go           https://example.com/landing   302
/app/*        /app/index.html   200
/en/*         /en/404.html      404
/bad line with too many parts
`;

const HEADERS = `/*
  X-Frame-Options: DENY
  X-Robots-Tag: noindex
/assets/*
  Cache-Control: public, max-age=31536000, immutable
  ! X-Frame-Options
/about
  X-Robots-Tag: nosnippet
`;

describe('edge: _redirects and _headers of a static deployment', () => {
  let t: TestApp;
  let edge: Server;
  let port: number;
  let withRules: { host: string; deploymentId: string };
  let plain: { host: string };

  const get = (host: string, path: string, opts?: Parameters<typeof edgeRequest>[3]) =>
    edgeRequest(port, `${host}.localhost:${port}`, path, opts);
  const site = (path: string, opts?: Parameters<typeof edgeRequest>[3]) => get(withRules.host, path, opts);

  beforeAll(async () => {
    t = await createTestApp();
    const alice = await t.user('alice@example.com');
    const root = t.deps.config.artifactsDir;
    const files = {
      'index.html': INDEX,
      'about.html': ABOUT,
      'docs/index.html': DOCS,
      'app/index.html': APP,
      '404.html': NOT_FOUND,
      'en/404.html': EN_NOT_FOUND,
      'en/index.html': EN_INDEX,
      'assets/app.css': CSS,
    };
    const rules = await storeSite(root, { ...files, _redirects: REDIRECTS, _headers: HEADERS });
    const project = await insertProject(t, alice.orgId, { name: 'routed' });
    const d = await insertDeployment(t, project.id, {
      artifact_id: rules,
      runtime: JSON.stringify({ kind: 'static', spa: false }),
    });
    withRules = { host: d.host, deploymentId: d.id };

    const none = await storeSite(root, files);
    const other = await insertProject(t, alice.orgId, { name: 'plain' });
    plain = {
      host: (
        await insertDeployment(t, other.id, {
          artifact_id: none,
          runtime: JSON.stringify({ kind: 'static', spa: false }),
        })
      ).host,
    };

    edge = createEdgeServer({ resolver: createHostResolver(t.deps, { ttlMs: 0 }), artifactsRoot: root });
    port = await listen(edge);
  });
  afterAll(async () => {
    await new Promise((r) => edge.close(r));
    await t.close();
  });

  it("redirects a splat with the rule's status, passing the query on", async () => {
    const res = await site('/old-blog/2024/hello?utm=x');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/blog/2024/hello?utm=x');
    expect(res.headers['x-slipway-deployment']).toBe(withRules.deploymentId);
    // A rollback must undo a redirect at once: browsers keep a 301 for good unless told otherwise.
    expect(res.headers['cache-control']).toBe('public, max-age=0, must-revalidate');
    expect(res.text).toBe('Redirecting to /blog/2024/hello?utm=x\n');
    const head = await site('/old-blog/x', { method: 'HEAD' });
    expect(head.status).toBe(302);
    expect(head.body.length).toBe(0);
  });

  it("redirects by a placeholder, 301 by default, and with the path's _headers", async () => {
    const res = await site('/users/42');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/profile/42');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect((await site('/users/42/')).headers.location).toBe('/profile/42');
    expect((await site('/users/42/more')).status).toBe(404);
  });

  it('redirects to another site, and any method (a 308 keeps it)', async () => {
    const out = await site('/go?ref=1');
    expect(out.status).toBe(302);
    expect(out.headers.location).toBe('https://example.com/landing?ref=1');
    const post = await site('/legacy', { method: 'POST', body: 'a=1' });
    expect(post.status).toBe(308);
    expect(post.headers.location).toBe('/about');
    // A file still answers GET and HEAD only.
    expect((await site('/about', { method: 'POST' })).status).toBe(405);
  });

  it('rewrites with 200: the address stays, the target file answers', async () => {
    const res = await site('/app/settings/profile?tab=2');
    expect(res.status).toBe(200);
    expect(res.text).toBe(APP);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('answers a 404 rule with its page and status 404, and gives way to existing files', async () => {
    const missing = await site('/en/no-such-page');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe(EN_NOT_FOUND);
    expect(missing.headers['cache-control']).toBe('public, max-age=0, must-revalidate');
    const existing = await site('/en/');
    expect(existing.status).toBe(200);
    expect(existing.text).toBe(EN_INDEX);
    // Outside the rule, the site's own 404 page as usual.
    const elsewhere = await site('/nowhere');
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.text).toBe(NOT_FOUND);
  });

  it('a rule without ! gives way to a file at the path; with ! it applies over it', async () => {
    for (const path of ['/about', '/about/']) {
      const shadowed = await site(path);
      expect(shadowed.status, path).toBe(200);
      expect(shadowed.text, path).toBe(ABOUT);
    }
    for (const path of ['/docs', '/docs/']) {
      const forced = await site(path);
      expect(forced.status, path).toBe(301);
      expect(forced.headers.location, path).toBe('/documentation');
    }
    // The file itself is still there under its own name.
    expect((await site('/docs/index.html')).text).toBe(DOCS);
  });

  it("adds the headers of every matching block to files, replacing the edge's own", async () => {
    const css = await site('/assets/app.css');
    expect(css.status).toBe(200);
    expect(css.text).toBe(CSS);
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(css.headers['x-frame-options']).toBeUndefined();
    expect(css.headers['x-robots-tag']).toBe('noindex');
    expect(css.headers['content-length']).toBe(String(CSS.length));
    const about = await site('/about');
    expect(about.headers['x-frame-options']).toBe('DENY');
    expect(about.headers['x-robots-tag']).toBe('noindex, nosnippet');
    // On a 304 and a range too, and the edge's own fields stay.
    const notModified = await site('/assets/app.css', { headers: { 'if-none-match': css.headers.etag! } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const range = await site('/assets/app.css', { headers: { range: 'bytes=0-3' } });
    expect(range.status).toBe(206);
    expect(range.text).toBe('body');
    expect(range.headers['x-robots-tag']).toBe('noindex');
    expect(range.headers['x-slipway-deployment']).toBe(withRules.deploymentId);
  });

  it('never serves _redirects or _headers themselves', async () => {
    for (const path of ['/_redirects', '/_headers', '/%5Fredirects', '/_headers?x=1']) {
      const res = await site(path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).toBe(NOT_FOUND);
    }
  });

  it('leaves a deployment without rules as it was: no redirects, no added headers', async () => {
    const about = await get(plain.host, '/about');
    expect(about.status).toBe(200);
    expect(about.headers['x-frame-options']).toBeUndefined();
    expect((await get(plain.host, '/docs')).text).toBe(DOCS);
    expect((await get(plain.host, '/old-blog/x')).status).toBe(404);
  });

  it('answers a path with and without its trailing slash alike, never redirecting (docs/edge.md)', async () => {
    for (const [path, body] of [
      ['/about', ABOUT],
      ['/about/', ABOUT],
      ['/about.html', ABOUT],
      ['/docs', DOCS],
      ['/docs/', DOCS],
      ['/docs/index.html', DOCS],
    ] as const) {
      const res = await get(plain.host, path);
      expect(res.status, path).toBe(200);
      expect(res.text, path).toBe(body);
      expect(res.headers.location, path).toBeUndefined();
    }
  });
});
