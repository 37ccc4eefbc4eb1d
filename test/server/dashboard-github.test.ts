import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';
import { followedOrigin, redirectPayloads } from '../helpers/open-redirect.ts';

/**
 * Sign in with GitHub against a local stand-in for github.com: the web flow's pages on its web
 * host, the REST API under /api/v3 checked against GitHub's OpenAPI description.
 */
describe('dashboard: sign in with GitHub', () => {
  let github: GitHubApi;
  let t: TestApp;
  /** What the stand-in answers for the signed-in GitHub account. */
  let account: {
    emails: { email: string; verified: boolean; primary: boolean }[];
    orgs: string[];
    /** The App lacks the e-mail permission: GitHub answers 403. */
    noEmailPermission?: boolean;
  };
  const exchanges: Record<string, unknown>[] = [];

  const web = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = JSON.parse(body) as Record<string, unknown>;
        exchanges.push(form);
        res.writeHead(200, { 'content-type': 'application/json' });
        if (form.code !== 'good-code' || form.client_secret !== 'shh-secret') {
          res.end(
            JSON.stringify({
              error: 'bad_verification_code',
              error_description: 'The code passed is incorrect or expired.',
              error_uri: 'https://docs.github.com',
            }),
          );
        } else {
          res.end(JSON.stringify({ access_token: 'ghu_user_token', token_type: 'bearer', scope: '' }));
        }
        return;
      }
      res.writeHead(404).end();
    });
  };

  beforeAll(async () => {
    github = await createGitHubApi({ web });
    github.on('GET /user/emails', (call) => {
      if (call.headers.authorization !== 'token ghu_user_token')
        return { status: 401, body: { message: 'Bad credentials' } };
      if (account.noEmailPermission)
        return {
          status: 403,
          body: {
            message: 'Resource not accessible by integration',
            documentation_url:
              'https://docs.github.com/rest/users/emails#list-email-addresses-for-the-authenticated-user',
            status: '403',
          },
        };
      return { body: account.emails.map((e) => ({ ...e, visibility: null })) };
    });
    github.on('GET /user/orgs', () => ({
      body: account.orgs.map((login, i) => ({
        login,
        id: i + 1,
        node_id: 'x',
        url: '',
        repos_url: '',
        events_url: '',
        hooks_url: '',
        issues_url: '',
        members_url: '',
        public_members_url: '',
        avatar_url: '',
        description: null,
      })),
    }));
    t = await createTestApp({
      env: {
        GITHUB_CLIENT_ID: 'Iv1.client',
        GITHUB_CLIENT_SECRET: 'shh-secret',
        GITHUB_API_URL: `${github.url}/api/v3`,
        SLIPWAY_GITHUB_SIGN_UP: 'example.org,org:acme',
      },
    });
    await t.user('alice@example.com');
  });
  afterAll(async () => {
    await t?.close();
    await github?.stop();
  });

  /** Starts the flow; returns the state GitHub would send back and the cookie it rides on. */
  async function start(next = '/') {
    const res = await t.app.inject({
      method: 'GET',
      url: `/sign-in/github?next=${encodeURIComponent(next)}`,
    });
    expect(res.statusCode).toBe(303);
    const location = new URL(String(res.headers.location));
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    return { location, cookie, state: location.searchParams.get('state')! };
  }
  const callback = (cookie: string, query: Record<string, string>) =>
    t.app.inject({
      method: 'GET',
      url: `/sign-in/github/callback?${new URLSearchParams(query).toString()}`,
      headers: { cookie },
    });

  it('offers the button, and sends the browser to GitHub with the App’s client id and a state', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/sign-in' });
    expect(page.body).toContain('Sign in with GitHub');
    const { location, cookie, state } = await start('/projects/prj_x');
    expect(`${location.origin}${location.pathname}`).toBe(`${github.url}/login/oauth/authorize`);
    expect(location.searchParams.get('client_id')).toBe('Iv1.client');
    expect(location.searchParams.get('redirect_uri')).toBe('http://localhost:80/sign-in/github/callback');
    expect(state).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(cookie.startsWith(`slipway_github_state=${state}.`)).toBe(true);
  });

  it('signs in an existing user by a verified e-mail address and returns where they were going', async () => {
    account = {
      emails: [
        { email: 'someone-else@example.com', verified: false, primary: false },
        { email: 'Alice@Example.com', verified: true, primary: true },
      ],
      orgs: [],
    };
    const { cookie, state } = await start('/projects/prj_x');
    const res = await callback(cookie, { code: 'good-code', state });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/projects/prj_x');
    const session = [res.headers['set-cookie']].flat().find((c) => String(c).startsWith('slipway_session='))!;
    const home = await t.app.inject({
      method: 'GET',
      url: '/',
      headers: { cookie: String(session).split(';')[0]! },
    });
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('alice@example.com');
    expect(exchanges.at(-1)).toMatchObject({
      client_id: 'Iv1.client',
      code: 'good-code',
      redirect_uri: 'http://localhost:80/sign-in/github/callback',
    });
    expect(github.violations()).toEqual([]);
  });

  it('returns only to a page of the dashboard after GitHub, whatever next the link carried', async () => {
    account = { emails: [{ email: 'alice@example.com', verified: true, primary: true }], orgs: [] };
    for (const next of [...redirectPayloads('evil.example'), '/projects/prj_x?tab=logs']) {
      const { cookie, state } = await start(next);
      // What the state cookie carries through GitHub is already the checked path.
      const carried = Buffer.from(cookie.split('.')[1]!, 'base64url').toString();
      const res = await callback(cookie, { code: 'good-code', state });
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location, JSON.stringify(next)).toBe(carried);
      expect(followedOrigin(res.headers.location, 'http://localhost'), JSON.stringify(next)).toBe(
        'http://localhost',
      );
      if (next === '/projects/prj_x?tab=logs') expect(res.headers.location).toBe(next);
    }
    // A state cookie made by hand (never by this dashboard) is checked again on the way back.
    const { state } = await start();
    const forged = `slipway_github_state=${state}.${Buffer.from('/\t/evil.example/x').toString('base64url')}`;
    const res = await callback(forged, { code: 'good-code', state });
    expect(res.headers.location).toBe('/');
  });

  it('refuses a callback whose state this browser did not start, without asking GitHub', async () => {
    const before = exchanges.length;
    const { cookie } = await start();
    const res = await callback(cookie, { code: 'good-code', state: 'x'.repeat(32) });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('expired or was not started here');
    expect(String(res.headers['set-cookie'])).not.toContain('slipway_session=');
    const none = await callback('', { code: 'good-code', state: 'x'.repeat(32) });
    expect(none.statusCode).toBe(400);
    expect(exchanges.length).toBe(before);
  });

  it('shows GitHub’s refusal of a bad code in words', async () => {
    const { cookie, state } = await start();
    const res = await callback(cookie, { code: 'stale', state });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('The code passed is incorrect or expired.');
  });

  it('makes no user for an unknown address, unless its domain or organization may sign up', async () => {
    account = { emails: [{ email: 'bob@elsewhere.com', verified: true, primary: true }], orgs: ['other'] };
    let flow = await start();
    const refused = await callback(flow.cookie, { code: 'good-code', state: flow.state });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('No Slipway user has the e-mail address bob@elsewhere.com');
    expect(
      await t.deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'bob@elsewhere.com')
        .executeTakeFirst(),
    ).toBeUndefined();

    account = { emails: [{ email: 'bob@elsewhere.com', verified: true, primary: true }], orgs: ['Acme'] };
    flow = await start();
    const byOrg = await callback(flow.cookie, { code: 'good-code', state: flow.state });
    expect(byOrg.statusCode).toBe(303);
    expect(
      await t.deps.db
        .selectFrom('users')
        .select('email')
        .where('email', '=', 'bob@elsewhere.com')
        .executeTakeFirst(),
    ).toEqual({ email: 'bob@elsewhere.com' });

    account = { emails: [{ email: 'carol@example.org', verified: true, primary: true }], orgs: [] };
    flow = await start();
    expect((await callback(flow.cookie, { code: 'good-code', state: flow.state })).statusCode).toBe(303);

    account = { emails: [{ email: 'dave@example.org', verified: false, primary: true }], orgs: [] };
    flow = await start();
    const unverified = await callback(flow.cookie, { code: 'good-code', state: flow.state });
    expect(unverified.statusCode).toBe(403);
    expect(unverified.body).toContain('no verified e-mail address');
    expect(github.violations()).toEqual([]);
  });

  it("puts GitHub's error words on the page only for a sign-in this browser started", async () => {
    const lure = 'Your account is locked. Call +1 555 0100 to unlock it.';
    // Anyone's link, with the state of no sign-in of this browser, or none.
    const flow = await start();
    for (const query of <Record<string, string>[]>[
      { error: 'access_denied', error_description: lure },
      { error: 'access_denied', error_description: lure, state: 'made-up-state-made-up-state-abcd' },
    ]) {
      const forged = await callback(flow.cookie, query);
      expect(forged.statusCode).toBe(400);
      expect(forged.body).not.toContain('555 0100');
      expect(forged.body).toContain('The sign-in with GitHub expired or was not started here');
    }
    // GitHub's own answer to this browser's sign-in, when the person declines.
    const declined = await callback(flow.cookie, {
      error: 'access_denied',
      error_description: 'The user has denied your application access.',
      state: flow.state,
    });
    expect(declined.statusCode).toBe(401);
    expect(declined.body).toContain('GitHub: The user has denied your application access.');
  });

  it('explains, in words, a GitHub App that may not read e-mail addresses', async () => {
    account = {
      emails: [{ email: 'alice@example.com', verified: true, primary: true }],
      orgs: [],
      noEmailPermission: true,
    };
    {
      const flow = await start();
      const res = await callback(flow.cookie, { code: 'good-code', state: flow.state });
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('GitHub did not let Slipway read your e-mail addresses');
      expect(res.body).toContain('&quot;Email addresses&quot; account permission');
      expect(res.body).not.toContain('INTERNAL_ERROR');
    }
  });
});

describe('dashboard without the App’s OAuth client', () => {
  it('offers only the token form', async () => {
    const t = await createTestApp();
    try {
      const page = await t.app.inject({ method: 'GET', url: '/sign-in' });
      expect(page.body).not.toContain('Sign in with GitHub');
      const res = await t.app.inject({ method: 'GET', url: '/sign-in/github' });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/sign-in');
    } finally {
      await t.close();
    }
  });
});
