import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentRow, storeSite } from '../helpers/edge.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

/**
 * A visitor of a protected preview signs in with GitHub (docs/protection.md#signing-in), against
 * the local stand-in for github.com the dashboard's GitHub sign-in tests use, and comes back to the
 * page it asked for with the protection cookie: every hop over HTTP, as a browser follows them.
 */
describe('preview protection: signing in with GitHub', () => {
  let github: GitHubApi;
  let s: Stack;
  let host = '';
  /** The GitHub account's verified address: a member's, or a stranger's. */
  let email = '';

  const web = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = JSON.parse(body) as Record<string, unknown>;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          form.code === 'good-code' && form.client_secret === 'shh-secret'
            ? JSON.stringify({ access_token: 'ghu_user_token', token_type: 'bearer', scope: '' })
            : JSON.stringify({ error: 'bad_verification_code', error_description: 'The code is wrong.' }),
        );
        return;
      }
      res.writeHead(404).end();
    });
  };

  beforeAll(async () => {
    github = await createGitHubApi({ web });
    github.on('GET /user/emails', (call) =>
      call.headers.authorization === 'token ghu_user_token'
        ? { body: [{ email, verified: true, primary: true, visibility: null }] }
        : { status: 401, body: { message: 'Bad credentials' } },
    );
    github.on('GET /user/orgs', () => ({ body: [] }));
    s = await startStack({
      env: {
        SLIPWAY_DEFAULT_PROTECTION: 'previews',
        GITHUB_CLIENT_ID: 'Iv1.client',
        GITHUB_CLIENT_SECRET: 'shh-secret',
        GITHUB_API_URL: `${github.url}/api/v3`,
      },
    });
    const owner = await s.user('reviewer@example.com');
    await s.user('stranger@example.com');
    const project = await s
      .client(owner.token)
      .projects.create({ name: 'gh-guarded', organizationId: owner.orgId });
    const deps = s.running.deps;
    const artifactId = await storeSite(deps.config.artifactsDir, {
      'index.html': 'home',
      'docs/page.html': 'the protected page',
    });
    const row = deploymentRow(project.id, new Date().toISOString(), {
      target: 'preview',
      branch: 'feature',
      artifact_id: artifactId,
      runtime: JSON.stringify({ kind: 'static', spa: false }),
    });
    await deps.db.insertInto('deployments').values(row).execute();
    host = `${row.host}.localhost:${s.edgePort}`;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await github?.stop();
  });

  /** Cookies a browser keeps for the dashboard: name=value by name. */
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      jar.set(pair.slice(0, pair.indexOf('=')), pair);
    }
  };
  const dashboard = async (url: string) => {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar.values()].join('; ') } });
    keep(res);
    return res;
  };
  /** Follows the dashboard's redirects (relative ones are the dashboard's) until an answer that is not one. */
  async function follow(url: string): Promise<{ res: Response; url: string }> {
    for (let i = 0; i < 10; i++) {
      const res = await dashboard(url);
      if (res.status !== 302 && res.status !== 303) return { res, url };
      const to = new URL(res.headers.get('location')!, url);
      // GitHub's authorize page: the person says yes, and GitHub sends the browser back.
      if (to.href.startsWith(`${github.url}/login/oauth/authorize`)) {
        expect(to.searchParams.get('client_id')).toBe('Iv1.client');
        const back = new URL(to.searchParams.get('redirect_uri')!);
        back.search = new URLSearchParams({
          code: 'good-code',
          state: to.searchParams.get('state')!,
        }).toString();
        // The stack's dashboard is on the API's address; the callback the App names is there.
        url = `${s.apiUrl}${back.pathname}${back.search}`;
        continue;
      }
      url = to.href;
    }
    throw new Error('too many redirects');
  }

  /** From the protected page to the GitHub button of the dashboard's sign-in page. */
  async function toGitHub(path: string): Promise<string> {
    const first = await s.fetchFromEdge(`http://${host}${path}`);
    expect(first.status).toBe(302);
    const signIn = await follow(first.headers.get('location')!);
    expect(signIn.res.status).toBe(200);
    const page = await signIn.res.text();
    const button = /href="([^"]*\/sign-in\/github\?[^"]*)"/.exec(page);
    expect(button, 'the sign-in page offers GitHub').not.toBeNull();
    return new URL(button![1]!.replaceAll('&amp;', '&'), signIn.url).href;
  }

  it('comes back to the page it asked for, with the cookie for that host', async () => {
    jar.clear();
    email = 'reviewer@example.com';
    const { res } = await follow(await toGitHub('/docs/page.html?tab=2'));
    // The dashboard's page that sends the browser on to the host with its one-time code.
    expect(res.status).toBe(200);
    const onward = new URL(
      /http-equiv="refresh" content="0;url=([^"]+)"/.exec(await res.text())![1]!.replaceAll('&amp;', '&'),
    );
    expect(onward.host).toBe(host);
    expect(onward.pathname).toBe('/_slipway/auth');
    const back = await s.fetchFromEdge(onward.href);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('/docs/page.html?tab=2');
    const cookie = back.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie.startsWith('slipway_protection=')).toBe(true);
    const page = await s.fetchFromEdge(`http://${host}/docs/page.html?tab=2`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('the protected page');
    expect(github.violations()).toEqual([]);
  });

  it('signs a GitHub account of no member in, but gives it no code and no cookie', async () => {
    jar.clear();
    email = 'stranger@example.com';
    const { res } = await follow(await toGitHub('/'));
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain('is not a member of the organization');
    expect(text).not.toContain('/_slipway/auth');
  });
});
