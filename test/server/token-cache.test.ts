import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';
import { createTokenCache, type CachedToken } from '../../server/platform/deps/token-cache.ts';
import { createLocalNotifier } from '../../server/platform/store/notify.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const token = (tokenId: string): CachedToken => ({
  tokenId,
  userId: 'usr_1',
  email: 'a@example.com',
  lastUsedAt: null,
  rank: 1,
  projectId: null,
  scopeRole: null,
  expiresAt: null,
  source: 'user',
});

describe('token cache', () => {
  it('keeps a lookup for its time to live, and drops everything on invalidate', () => {
    let now = 50_000;
    const cache = createTokenCache(createLocalNotifier(), 1000, () => now);
    expect(cache.get('h1')).toBeUndefined();
    cache.set('h1', token('tok_1'));
    cache.set('h2', token('tok_2'));
    now = 50_999;
    expect(cache.get('h1')?.tokenId).toBe('tok_1');
    now = 51_001;
    expect(cache.get('h1')).toBeUndefined();
    cache.set('h1', token('tok_1'));
    cache.invalidate();
    expect([cache.get('h1'), cache.get('h2')]).toEqual([undefined, undefined]);
  });

  it('forgets the least recently used lookup past 10,000, keeping the rest', () => {
    const now = 50_000;
    const cache = createTokenCache(createLocalNotifier(), 60_000, () => now);
    for (let i = 0; i < 10_000; i++) cache.set(`h${i}`, token(`tok_${i}`));
    expect(cache.get('h0')?.tokenId).toBe('tok_0'); // h0 is now the most recently used
    cache.set('h10000', token('tok_10000'));
    expect(cache.get('h1')).toBeUndefined();
    expect([cache.get('h0')?.tokenId, cache.get('h2')?.tokenId, cache.get('h10000')?.tokenId]).toEqual([
      'tok_0',
      'tok_2',
      'tok_10000',
    ]);
  });

  it('keeps nothing with a time to live of 0', () => {
    const cache = createTokenCache(createLocalNotifier(), 0, () => 0);
    cache.set('h1', token('tok_1'));
    expect(cache.get('h1')).toBeUndefined();
  });

  it('reads SLIPWAY_TOKEN_CACHE_TTL, 0 included, and names it when malformed', () => {
    const base = { SLIPWAY_DATA_DIR: '/tmp/slipway-config-test' };
    expect(loadConfig(base).tokenCacheTtlMs).toBe(1000);
    expect(loadConfig({ ...base, SLIPWAY_TOKEN_CACHE_TTL: '0' }).tokenCacheTtlMs).toBe(0);
    expect(loadConfig({ ...base, SLIPWAY_TOKEN_CACHE_TTL: '250ms' }).tokenCacheTtlMs).toBe(250);
    expect(() => loadConfig({ ...base, SLIPWAY_TOKEN_CACHE_TTL: 'briefly' })).toThrow(
      'SLIPWAY_TOKEN_CACHE_TTL must be a duration such as 1s or 500ms, or 0 to look every token up, got "briefly"',
    );
  });
});

describe('token lookups through the API, with a cache that would hold them for an hour', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const limit = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-limit']);

  it('reuses a lookup: a change made behind the service’s back waits for the expiry', async () => {
    t = await createTestApp({ env: { SLIPWAY_TOKEN_CACHE_TTL: '1h' } });
    const alice = await t.user();
    expect(limit(await t.call(alice, 'GET', '/v1/user'))).toBe(100);
    await t.deps.db.updateTable('organizations').set({ plan: 'pro' }).where('id', '=', alice.orgId).execute();
    expect(limit(await t.call(alice, 'GET', '/v1/user'))).toBe(100);
  });

  it('looks every token up with a time to live of 0', async () => {
    t = await createTestApp({ env: { SLIPWAY_TOKEN_CACHE_TTL: '0' } });
    const alice = await t.user();
    expect(limit(await t.call(alice, 'GET', '/v1/user'))).toBe(100);
    await t.deps.db.updateTable('organizations').set({ plan: 'pro' }).where('id', '=', alice.orgId).execute();
    expect(limit(await t.call(alice, 'GET', '/v1/user'))).toBe(1000);
  });

  it('applies revocations, plan changes and memberships made through the service at once', async () => {
    t = await createTestApp({ env: { SLIPWAY_TOKEN_CACHE_TTL: '1h' } });
    const owner = await t.user();
    const member = await t.user();
    const org = await t.call(owner, 'POST', '/v1/organizations', { name: 'cached-team' });
    expect(limit(org)).toBe(100);
    expect(limit(await t.call(member, 'GET', '/v1/user'))).toBe(100);

    await t.call(owner, 'PATCH', `/v1/organizations/${org.body.data.id}`, { plan: 'pro' });
    expect(limit(await t.call(owner, 'GET', '/v1/user'))).toBe(1000);

    await t.call(owner, 'POST', `/v1/organizations/${org.body.data.id}/members/invite`, {
      email: member.email,
      role: 'viewer',
    });
    expect(limit(await t.call(member, 'GET', '/v1/user'))).toBe(1000);
    await t.call(owner, 'DELETE', `/v1/organizations/${org.body.data.id}/members/${member.email}`);
    expect(limit(await t.call(member, 'GET', '/v1/user'))).toBe(100);

    const created = await t.call(owner, 'POST', '/v1/user/tokens', { name: 'short-lived' });
    const second = created.body.data.token as string;
    expect((await t.call(second, 'GET', '/v1/user')).status).toBe(200);
    expect((await t.call(owner, 'DELETE', `/v1/user/tokens/${created.body.data.id}`)).status).toBe(200);
    const after = await t.call(second, 'GET', '/v1/user');
    expect([after.status, after.body.error?.code]).toEqual([401, 'UNAUTHORIZED']);
  });
});
