import type { TestApp, TestUser } from './app.ts';

/** A user signed in to the dashboard through inject(): their cookie, the CSRF value, and GET and form POST. */
export async function dashboardSession(t: TestApp, user: TestUser) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
    payload: new URLSearchParams({ token: user.token, next: '/' }).toString(),
  });
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}: ${res.body}`);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
  const home = await get('/');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)![1]!;
  const post = (url: string, form: Record<string, string>, withCsrf = true) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { cookie, origin: 'http://localhost:80', 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(withCsrf ? { _csrf: csrf, ...form } : form).toString(),
    });
  return { cookie, csrf, get, post };
}
