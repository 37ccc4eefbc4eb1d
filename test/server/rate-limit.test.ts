import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { runMonitoringTick } from '../../server/schedule/monitoring-tick.ts';
import { ManualClock } from '../helpers/clock.ts';
import { testDialect } from '../helpers/database.ts';

const epoch = (iso: string) => Date.parse(iso) / 1000;

/** The three rate-limit headers of a response, as numbers. */
const limits = (res: { headers: Record<string, unknown> }) => ({
  limit: Number(res.headers['x-ratelimit-limit']),
  remaining: Number(res.headers['x-ratelimit-remaining']),
  reset: Number(res.headers['x-ratelimit-reset']),
});

describe('rate limits', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(() => t.close());

  /** What the database holds (on SQLite, once the process has written what it counted). */
  const count = async (user: TestUser) => {
    await t.deps.rateCounts.flush();
    const rows = await t.deps.db
      .selectFrom('rate_limits')
      .select('count')
      .where('user_id', '=', user.userId)
      .execute();
    return rows.reduce((n, r) => n + Number(r.count), 0);
  };

  it('gives a free token exactly 100 requests an hour, then 429 with Retry-After', async () => {
    clock.set('2026-11-22T10:20:00.000Z');
    const reset = epoch('2026-11-22T11:00:00.000Z');
    const u = await t.user();
    for (let i = 1; i <= 100; i++) {
      const res = await t.call(u, 'GET', '/v1/user');
      expect(res.status, `request ${i}`).toBe(200);
      expect(limits(res)).toEqual({ limit: 100, remaining: 100 - i, reset });
    }
    const refused = await t.call(u, 'GET', '/v1/user');
    expect(refused.status).toBe(429);
    expect(refused.body.success).toBe(false);
    expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.body.error.message).toContain('2400 seconds');
    expect(refused.headers['retry-after']).toBe('2400');
    expect(limits(refused)).toEqual({ limit: 100, remaining: 0, reset });

    // Refused requests do not count: the window still holds 100, and waiting is enough.
    clock.advance(30 * 60_000);
    const still = await t.call(u, 'GET', '/v1/user');
    expect(still.status).toBe(429);
    expect(still.headers['retry-after']).toBe('600');
    expect(await count(u)).toBe(100);

    clock.set('2026-11-22T11:00:00.000Z');
    const next = await t.call(u, 'GET', '/v1/user');
    expect(next.status).toBe(200);
    expect(limits(next)).toEqual({ limit: 100, remaining: 99, reset: epoch('2026-11-22T12:00:00.000Z') });
  });

  it('counts every authenticated request the operation runs for, its errors included; not invalid or unauthenticated ones', async () => {
    clock.set('2026-11-23T08:00:00.000Z');
    const u = await t.user();
    const missing = await t.call(u, 'GET', '/v1/projects/prj_doesnotexist00000000');
    expect(missing.status).toBe(404);
    expect(limits(missing)).toMatchObject({ limit: 100, remaining: 99 });
    // Input is checked before the request is charged: a request refused as invalid costs nothing.
    const invalid = await t.call(u, 'POST', '/v1/organizations', { name: 'Not Valid' });
    expect(invalid.status).toBe(400);
    expect(invalid.headers['x-ratelimit-remaining']).toBeUndefined();
    const badQuery = await t.call(u, 'GET', '/v1/projects?limit=1000');
    expect(badQuery.status).toBe(400);
    const next = await t.call(u, 'GET', '/v1/user');
    expect(limits(next).remaining).toBe(98);
    const anonymous = await t.call(null, 'GET', '/v1/user');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined();
    const health = await t.call(null, 'GET', '/healthz');
    expect(health.headers['x-ratelimit-limit']).toBeUndefined();
    expect(await count(u)).toBe(2);
  });

  it('counts per user across all their tokens: a new token is not a new allowance', async () => {
    clock.set('2026-11-23T09:00:00.000Z');
    const u = await t.user();
    const other = await t.user();
    await t.call(u, 'GET', '/v1/user');
    const second = await t.call(u, 'POST', '/v1/user/tokens', { name: 'second' });
    expect(limits(second).remaining).toBe(98);
    const viaSecond = await t.call(second.body.data.token, 'GET', '/v1/user');
    expect(limits(viaSecond).remaining).toBe(97);

    // Spend the rest with fresh tokens, one request each: the hundred-and-first is refused.
    for (let i = 4; i <= 100; i++) {
      const minted = await t.call(u, 'POST', '/v1/user/tokens', { name: `t${i}` });
      expect(minted.status, `request ${i}`).toBe(201);
    }
    const fresh = await t.deps.db
      .selectFrom('tokens')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', u.userId)
      .executeTakeFirstOrThrow();
    expect(Number(fresh.n)).toBe(1 + 1 + 97);
    const refused = await t.call(second.body.data.token, 'GET', '/v1/user');
    expect(refused.status).toBe(429);
    expect(await count(u)).toBe(100);
    // Another user's window is their own.
    expect(limits(await t.call(other, 'GET', '/v1/user')).remaining).toBe(99);
  });

  it('forgets ended windows in the monitoring run, and keeps the current one', async () => {
    clock.set('2026-11-23T12:10:00.000Z');
    const u = await t.user();
    await t.deps.db
      .insertInto('rate_limits')
      .values({ user_id: u.userId, window_start: epoch('2026-11-23T10:00:00.000Z'), count: 7 })
      .execute();
    expect(limits(await t.call(u, 'GET', '/v1/user')).remaining).toBe(99);
    expect(await count(u)).toBe(8);
    await runMonitoringTick(t.deps);
    expect(await count(u)).toBe(1);
  });

  it('raises the limit to 1000 when one of the owner’s organizations is on pro', async () => {
    clock.set('2026-11-23T10:30:00.000Z');
    const owner = await t.user();
    const member = await t.user();
    const org = await t.call(owner, 'POST', '/v1/organizations', { name: 'pro-team' });
    expect(limits(org).limit).toBe(100);
    const upgraded = await t.call(owner, 'PATCH', `/v1/organizations/${org.body.data.id}`, { plan: 'pro' });
    expect(upgraded.status).toBe(200);
    const after = await t.call(owner, 'GET', '/v1/user');
    expect(limits(after)).toMatchObject({ limit: 1000, remaining: 997 });

    // A viewer of a pro organization gets the pro tier too: the best plan among their organizations.
    expect(limits(await t.call(member, 'GET', '/v1/user')).limit).toBe(100);
    await t.call(owner, 'POST', `/v1/organizations/${org.body.data.id}/members/invite`, {
      email: member.email,
      role: 'viewer',
    });
    expect(limits(await t.call(member, 'GET', '/v1/user'))).toMatchObject({ limit: 1000, remaining: 998 });

    // Skip ahead to the end of the window rather than send a thousand requests: an operator's
    // change in the database applies once the process has written what it counted (on SQLite,
    // within a second; here at once).
    await t.deps.rateCounts.flush();
    await t.deps.db
      .updateTable('rate_limits')
      .set({ count: 999 })
      .where('user_id', '=', owner.userId)
      .execute();
    await t.deps.rateCounts.flush();
    const last = await t.call(owner, 'GET', '/v1/user');
    expect(last.status).toBe(200);
    expect(limits(last).remaining).toBe(0);
    const refused = await t.call(owner, 'GET', '/v1/user');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1800');
  });
});

describe('enterprise rate limits across processes', () => {
  const clock = new ManualClock('2026-11-22T10:59:00.000Z');
  const env = { SLIPWAY_ENTERPRISE_RATE_LIMIT: '5' };
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await createTestApp({ clock, env });
    // A second service on the same database, as a second API process would be.
    b = await createTestApp({ clock, env, dataDir: a.dataDir });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const statusesOf = async (calls: [TestApp, TestUser][]) => {
    const statuses: number[] = [];
    for (const [app, u] of calls) statuses.push((await app.call(u, 'GET', '/v1/user')).status);
    return statuses;
  };
  const enterprise = async (u: TestUser) =>
    a.deps.db.updateTable('organizations').set({ plan: 'enterprise' }).where('id', '=', u.orgId).execute();

  it.runIf(testDialect() === 'postgres')(
    'applies SLIPWAY_ENTERPRISE_RATE_LIMIT and shares one count between processes, request by request',
    async () => {
      const u = await a.user();
      await enterprise(u);
      const statuses = await statusesOf([a, b, a, b, a, b, a].map((app) => [app, u]));
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const refused = await b.call(u, 'GET', '/v1/user');
      expect(limits(refused)).toEqual({ limit: 5, remaining: 0, reset: epoch('2026-11-22T11:00:00.000Z') });
      expect(refused.headers['retry-after']).toBe('60');
    },
  );

  it.runIf(testDialect() === 'sqlite')(
    'applies SLIPWAY_ENTERPRISE_RATE_LIMIT; on SQLite two processes share one count once each has written',
    async () => {
      const u = await a.user();
      await enterprise(u);
      expect(
        await statusesOf([
          [a, u],
          [a, u],
          [a, u],
        ]),
      ).toEqual([200, 200, 200]);
      // Written behind (every second; here at once): the other process reads the count of 3.
      await a.deps.rateCounts.flush();
      const first = await b.call(u, 'GET', '/v1/user');
      expect(limits(first)).toEqual({ limit: 5, remaining: 1, reset: epoch('2026-11-22T11:00:00.000Z') });
      expect(
        await statusesOf([
          [b, u],
          [b, u],
        ]),
      ).toEqual([200, 429]);
      await b.deps.rateCounts.flush();
      // The first process forgets a count it added nothing to since its last write, and reads 5.
      await a.deps.rateCounts.flush();
      const refused = await a.call(u, 'GET', '/v1/user');
      expect(limits(refused)).toEqual({ limit: 5, remaining: 0, reset: epoch('2026-11-22T11:00:00.000Z') });
      expect(refused.headers['retry-after']).toBe('60');
      const stored = await a.deps.db
        .selectFrom('rate_limits')
        .select('count')
        .where('user_id', '=', u.userId)
        .executeTakeFirstOrThrow();
      expect(Number(stored.count)).toBe(5);
    },
  );
});

describe('plans chosen by the operator (SLIPWAY_PLAN_CHANGES=operator)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SLIPWAY_PLAN_CHANGES: 'operator' } });
  });
  afterAll(() => t.close());

  it("refuses a member's plan change and a new organization on a paid plan, and changes nothing", async () => {
    const owner = await t.user();
    const upgrade = await t.call(owner, 'PATCH', `/v1/organizations/${owner.orgId}`, { plan: 'enterprise' });
    expect(upgrade.status).toBe(403);
    expect(upgrade.body.error.code).toBe('FORBIDDEN');
    expect(upgrade.body.error.message).toContain('slipway org plan');
    // Nothing else of the request applied either.
    const withName = await t.call(owner, 'PATCH', `/v1/organizations/${owner.orgId}`, {
      plan: 'pro',
      displayName: 'Renamed',
    });
    expect(withName.status).toBe(403);
    const org = await t.call(owner, 'GET', `/v1/organizations/${owner.orgId}`);
    expect(org.body.data).toMatchObject({ plan: 'free', displayName: expect.not.stringMatching('Renamed') });
    expect(limits(await t.call(owner, 'GET', '/v1/user')).limit).toBe(100);

    const created = await t.call(owner, 'POST', '/v1/organizations', {
      name: 'paid-team',
      plan: 'enterprise',
    });
    expect(created.status).toBe(403);
    const list = await t.call(owner, 'GET', '/v1/organizations');
    expect(list.body.data.map((o: { name: string }) => o.name)).not.toContain('paid-team');
  });

  it('still lets members rename, keep their plan, and create free organizations', async () => {
    const owner = await t.user();
    const same = await t.call(owner, 'PATCH', `/v1/organizations/${owner.orgId}`, {
      plan: 'free',
      displayName: 'Same plan',
    });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ plan: 'free', displayName: 'Same plan' });
    const created = await t.call(owner, 'POST', '/v1/organizations', {
      name: `free-${owner.userId.slice(-6)}`,
    });
    expect(created.status).toBe(201);
    expect(created.body.data.plan).toBe('free');
  });

  it('applies a plan the operator sets from the next request', async () => {
    const owner = await t.user();
    const { setOrganizationPlan } = await import('../../server/features/identity/organizations/set-plan.ts');
    const result = await setOrganizationPlan(t.deps, owner.orgId, 'pro');
    expect(result.previous).toBe('free');
    expect(limits(await t.call(owner, 'GET', '/v1/user')).limit).toBe(1000);
  });
});
