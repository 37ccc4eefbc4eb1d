import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { followedOrigin, rawRedirectQueries, redirectPayloads } from '../helpers/open-redirect.ts';

/** inject()'s requests come from here (port 80 is http's own, so the origin does not name it). */
const ORIGIN = 'http://localhost';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' };

/**
 * The sign-in's `next` is an open redirect unless every `Location` it produces stays on the
 * dashboard: each known bypass goes through each way in (a signed-in visit to /sign-in, the
 * sign-in form), and the answer is resolved as a browser resolves it.
 */
describe('dashboard: where signing in returns to', () => {
  let t: TestApp;
  let alice: TestUser;
  let cookie: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    const res = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      headers: FORM,
      payload: new URLSearchParams({ token: alice.token, next: '/' }).toString(),
    });
    expect(res.statusCode).toBe(303);
    cookie = String(res.headers['set-cookie']).split(';')[0]!;
  });
  afterAll(() => t.close());

  /** Every `Location` the dashboard answers for `query` (the raw `next=` value of a link). */
  async function locations(query: string, decoded: string) {
    const visit = await t.app.inject({ method: 'GET', url: `/sign-in?next=${query}`, headers: { cookie } });
    const form = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      headers: FORM,
      payload: new URLSearchParams({ token: alice.token, next: decoded }).toString(),
    });
    for (const res of [visit, form]) expect(res.statusCode, `${decoded}: ${res.body}`).toBe(303);
    return [visit.headers.location, form.headers.location];
  }

  it('never sends the browser to another origin, for each known bypass', async () => {
    for (const payload of redirectPayloads('evil.example')) {
      for (const location of await locations(encodeURIComponent(payload), payload)) {
        expect(followedOrigin(location, ORIGIN), JSON.stringify({ payload, location })).toBe(ORIGIN);
        // eslint-disable-next-line no-control-regex -- a control character in Location is the bug
        expect(String(location)).not.toMatch(/[\u0000-\u001f\u007f\\]/);
      }
    }
    for (const query of rawRedirectQueries('evil.example')) {
      const decoded = new URLSearchParams(`next=${query}`).get('next')!;
      for (const location of await locations(query, decoded)) {
        expect(followedOrigin(location, ORIGIN), JSON.stringify({ query, location })).toBe(ORIGIN);
      }
    }
  });

  it('falls back to the home page for the issue’s own example', async () => {
    const [visit, form] = await locations('/%09/127.0.0.1:4000/x', '/\t/127.0.0.1:4000/x');
    expect(visit).toBe('/');
    expect(form).toBe('/');
  });

  it('still returns to an ordinary page of the dashboard, with its query and fragment', async () => {
    for (const next of ['/projects/prj_x?tab=logs', '/projects/prj_x?tab=logs#build', '/orgs/org_1', '/']) {
      expect(await locations(encodeURIComponent(next), next)).toEqual([next, next]);
    }
    // Characters a header cannot carry are sent percent-encoded, as the browser would request them.
    expect(await locations(encodeURIComponent('/projects/é x'), '/projects/é x')).toEqual([
      '/projects/%C3%A9%20x',
      '/projects/%C3%A9%20x',
    ]);
  });

  it('tells a visitor that the link asked to leave the dashboard, and keeps only a safe next', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/sign-in?next=/%09/evil.example/x' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="next" value="/"');
    expect(page.body).toContain(
      'The link you followed asked to go to another site after signing in: you will go to this dashboard’s home page instead.',
    );
    const plain = await t.app.inject({ method: 'GET', url: '/sign-in?next=%2Fprojects%2Fprj_x' });
    expect(plain.body).toContain('name="next" value="/projects/prj_x"');
    expect(plain.body).not.toContain('another site');
  });

  it('is not followed off-site by a real HTTP client (a server on 127.0.0.1 counts visits)', async () => {
    let visits = 0;
    const evil: Server = createServer((_req, res) => {
      visits++;
      res.end('evil');
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilHost = `127.0.0.1:${(evil.address() as AddressInfo).port}`;
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const origin = new URL(address).origin;
    try {
      for (const payload of redirectPayloads(evilHost)) {
        // fetch follows redirects with the WHATWG URL parser, as a browser does.
        const visit = await fetch(`${origin}/sign-in?next=${encodeURIComponent(payload)}`, {
          headers: { cookie },
        });
        const form = await fetch(`${origin}/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: new URLSearchParams({ token: alice.token, next: payload }).toString(),
        });
        for (const res of [visit, form]) {
          expect(new URL(res.url).origin, JSON.stringify(payload)).toBe(origin);
          await res.arrayBuffer();
        }
      }
      const issue = await fetch(`${origin}/sign-in?next=/%09/${evilHost}/x`, { headers: { cookie } });
      expect(issue.url).toBe(`${origin}/`);
      expect(visits).toBe(0);
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });
});

describe('dashboard under a path: where signing in returns to', () => {
  it('keeps the return path under the public URL’s path and origin', async () => {
    const t = await createTestApp({ env: { SLIPWAY_PUBLIC_API_URL: 'https://deploy.example.com/slipway' } });
    try {
      const alice = await t.user('alice@example.com');
      const signIn = (next: string) =>
        t.app.inject({
          method: 'POST',
          url: '/sign-in',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'https://deploy.example.com',
          },
          payload: new URLSearchParams({ token: alice.token, next }).toString(),
        });
      expect((await signIn('/slipway/projects/prj_x?tab=logs')).headers.location).toBe(
        '/slipway/projects/prj_x?tab=logs',
      );
      for (const next of [
        '/elsewhere',
        '/slipway/..//evil.example/x',
        '/slipway/../elsewhere',
        '/slipway\\..\\elsewhere',
        ...redirectPayloads('evil.example'),
      ]) {
        const location = (await signIn(next)).headers.location;
        expect(location, JSON.stringify(next)).toBe('/slipway/');
      }
    } finally {
      await t.close();
    }
  });
});
