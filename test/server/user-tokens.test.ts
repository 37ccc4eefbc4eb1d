import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

describe('user and API tokens', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-22T10:00:00.000Z');
  let alice: TestUser;
  let mallory: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    mallory = await t.user('mallory@example.com');
  });
  afterAll(() => t.close());

  const createToken = (user: TestUser | string, name: string) =>
    t.call(user, 'POST', '/v1/user/tokens', { name });

  it('creates a token and shows it this once', async () => {
    const res = await createToken(alice, 'ci');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^tok_[a-z0-9]{20}$/),
        name: 'ci',
        token: expect.stringMatching(/^slw_[A-Za-z0-9_-]{32,}$/),
        createdAt: clock.now().toISOString(),
      },
    });
    const { id, token } = res.body.data;
    const list = await t.call(alice, 'GET', '/v1/user/tokens?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual({
      id,
      name: 'ci',
      prefix: token.slice(0, 10),
      createdAt: clock.now().toISOString(),
      lastUsedAt: null,
    });
    expect(list.text).not.toContain(token);
    // Only a hash is stored.
    const row = await t.deps.db
      .selectFrom('tokens')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(Object.values(row)).not.toContain(token);
  });

  it('authenticates with the new token and records when it was last used', async () => {
    const { body } = await createToken(alice, 'laptop');
    clock.advance(5 * 60_000);
    const me = await t.call(body.data.token, 'GET', '/v1/user');
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(alice.userId);
    const list = await t.call(body.data.token, 'GET', '/v1/user/tokens?limit=100');
    const entry = list.body.data.find((tok: { id: string }) => tok.id === body.data.id);
    expect(entry.lastUsedAt).toBe(clock.now().toISOString());
  });

  it('revokes a token: it answers 401 from then on and leaves the list', async () => {
    const { body } = await createToken(alice, 'to-revoke');
    expect((await t.call(body.data.token, 'GET', '/v1/user')).status).toBe(200);
    const del = await t.call(alice, 'DELETE', `/v1/user/tokens/${body.data.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: `Token ${body.data.id} revoked` });
    const after = await t.call(body.data.token, 'GET', '/v1/user');
    expect(after.status).toBe(401);
    expect(after.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'Unknown or revoked API token' });
    const list = await t.call(alice, 'GET', '/v1/user/tokens?limit=100');
    expect(list.body.data.map((tok: { id: string }) => tok.id)).not.toContain(body.data.id);
    const again = await t.call(alice, 'DELETE', `/v1/user/tokens/${body.data.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');
  });

  it('lets a token revoke itself', async () => {
    const { body } = await createToken(alice, 'self');
    expect((await t.call(body.data.token, 'DELETE', `/v1/user/tokens/${body.data.id}`)).status).toBe(200);
    expect((await t.call(body.data.token, 'GET', '/v1/user/tokens')).status).toBe(401);
  });

  it("hides other users' tokens as NOT_FOUND and never revokes them", async () => {
    const { body } = await createToken(mallory, 'mallorys');
    const res = await t.call(alice, 'DELETE', `/v1/user/tokens/${body.data.id}`);
    expect(res.status).toBe(404);
    expect((await t.call(body.data.token, 'GET', '/v1/user')).status).toBe(200);
    const list = await t.call(alice, 'GET', '/v1/user/tokens?limit=100');
    expect(list.body.data.map((tok: { id: string }) => tok.id)).not.toContain(body.data.id);
  });

  it('lists tokens newest first with meta', async () => {
    const u = await t.user();
    for (const name of ['one', 'two']) {
      clock.advance(1000);
      await createToken(u, name);
    }
    const res = await t.call(u, 'GET', '/v1/user/tokens?limit=2');
    // The helper's own "test" token is the oldest.
    expect(res.body.meta).toEqual({ page: 1, limit: 2, total: 3, next: expect.any(String) });
    expect(res.body.data.map((tok: { name: string }) => tok.name)).toEqual(['two', 'one']);
    const page2 = await t.call(u, 'GET', '/v1/user/tokens?limit=2&page=2');
    expect(page2.body.data.map((tok: { name: string }) => tok.name)).toEqual(['test']);
    expect((await t.call(u, 'GET', '/v1/user/tokens?limit=0')).status).toBe(400);
  });

  it('names bad fields', async () => {
    const empty = await createToken(alice, '');
    expect(empty.status).toBe(400);
    expect(empty.body.error.details[0].path).toBe('name');
    const missing = await t.call(alice, 'POST', '/v1/user/tokens', {});
    expect(missing.body.error.details).toEqual([{ path: 'name', message: 'is required' }]);
    const extra = await t.call(alice, 'POST', '/v1/user/tokens', { name: 'x', scopes: ['all'] });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details).toEqual([{ path: 'scopes', message: 'is not a known field' }]);
    const long = await createToken(alice, 'x'.repeat(101));
    expect(long.status).toBe(400);
  });

  it('answers 401 for a missing, malformed or unknown token', async () => {
    for (const [method, url] of [
      ['GET', '/v1/user'],
      ['GET', '/v1/user/tokens'],
      ['POST', '/v1/user/tokens'],
      ['DELETE', '/v1/user/tokens/tok_aaaaaaaaaaaaaaaaaaaa'],
    ] as const) {
      const none = await t.call(null, method, url);
      expect(none.status, url).toBe(401);
      expect(none.body.error.code).toBe('UNAUTHORIZED');
    }
    const malformed = await t.app.inject({
      method: 'GET',
      url: '/v1/user',
      headers: { authorization: 'Token abc' },
    });
    expect(malformed.statusCode).toBe(401);
    expect(malformed.json().error.message).toContain('Malformed');
    expect((await t.call(`slw_${'A'.repeat(40)}`, 'GET', '/v1/user')).status).toBe(401);
  });

  it('shows the user and their organizations', async () => {
    const org = await t.call(alice, 'POST', '/v1/organizations', { name: 'alice-team', plan: 'pro' });
    expect(org.status).toBe(201);
    const res = await t.call(alice, 'GET', '/v1/user');
    expect(res.body).toEqual({
      success: true,
      data: {
        id: alice.userId,
        email: 'alice@example.com',
        organizations: [
          { id: alice.orgId, name: 'alice', role: 'owner', plan: 'free' },
          { id: org.body.data.id, name: 'alice-team', role: 'owner', plan: 'pro' },
        ],
      },
    });
  });
});
