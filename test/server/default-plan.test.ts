import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';
import { createTestApp } from '../helpers/app.ts';

/** SLIPWAY_DEFAULT_PLAN: the operator lifts the free plan's 100 requests an hour for everyone new. */
describe('the default plan of new organizations', () => {
  it('puts new users’ personal organizations and new organizations on it, and their tokens get its limit', async () => {
    const t = await createTestApp({
      env: { SLIPWAY_DEFAULT_PLAN: 'enterprise', SLIPWAY_PLAN_CHANGES: 'operator' },
    });
    try {
      const alice = await t.user('alice@example.com');
      const personal = await t.call(alice, 'GET', `/v1/organizations/${alice.orgId}`);
      expect(personal.body.data.plan).toBe('enterprise');
      expect(personal.headers['x-ratelimit-limit']).toBe('10000');
      // Without a plan the new organization gets the default, which members may not change here.
      const team = await t.call(alice, 'POST', '/v1/organizations', { name: 'team' });
      expect(team.status).toBe(201);
      expect(team.body.data.plan).toBe('enterprise');
      const free = await t.call(alice, 'POST', '/v1/organizations', { name: 'cheap', plan: 'free' });
      expect(free.status).toBe(403);
    } finally {
      await t.close();
    }
  });

  it('is free unless set, and a bad value stops start-up naming the variable', async () => {
    const t = await createTestApp();
    try {
      const bob = await t.user('bob@example.com');
      expect((await t.call(bob, 'GET', `/v1/organizations/${bob.orgId}`)).body.data.plan).toBe('free');
    } finally {
      await t.close();
    }
    expect(() => loadConfig({ SLIPWAY_DEFAULT_PLAN: 'gold' })).toThrow(
      'SLIPWAY_DEFAULT_PLAN must be "free" (the default, 100 requests an hour), "pro" (1000) or "enterprise" (SLIPWAY_ENTERPRISE_RATE_LIMIT), got "gold"',
    );
  });
});
