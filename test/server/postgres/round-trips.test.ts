import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../../helpers/app.ts';
import { ManualClock } from '../../helpers/clock.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/**
 * An authenticated read of a project costs one round trip to PostgreSQL: the rate-limit count
 * and the project with the caller's role in one statement (server/platform/deps/rate-counts/rate-counts-batched.ts). Counted
 * at the driver: every statement any connection of this process sends.
 */
describe.skipIf(!url)(
  `round trips per request on PostgreSQL${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let t: TestApp;
    let alice: TestUser;
    let bob: TestUser;
    let projectId: string;
    beforeAll(async () => {
      database = await createTestDatabase();
      // Token lookups cached for the whole test, and a clock that stands still so that a token's
      // last use (kept to the minute) is never written: only the reads' own statements are counted.
      t = await createTestApp({
        env: { DATABASE_URL: database.url, SLIPWAY_TOKEN_CACHE_TTL: '1h' },
        clock: new ManualClock(),
      });
      alice = await t.user();
      bob = await t.user();
      const res = await t.call(alice, 'POST', '/v1/projects', {
        name: `trips-${Date.now()}`,
        repositoryUrl: 'https://example.com/r.git',
        organizationId: alice.orgId,
      });
      expect(res.status).toBe(201);
      projectId = res.body.data.id;
      // Each token's lookup is cached after its first request.
      expect((await t.call(alice, 'GET', '/v1/user')).status).toBe(200);
      expect((await t.call(bob, 'GET', '/v1/user')).status).toBe(200);
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      await t?.close();
      await database?.drop();
    });

    /** Statements sent while `run` runs, by any connection of this process. */
    async function statementsDuring(run: () => Promise<unknown>): Promise<string[]> {
      const sent: string[] = [];
      // Called with each client as `this`, below.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const original = pg.Client.prototype.query;
      const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
        this: pg.Client,
        ...args: unknown[]
      ) {
        const q = args[0] as string | { text: string };
        sent.push(typeof q === 'string' ? q : q.text);
        return (original as (...a: unknown[]) => never).apply(this, args);
      });
      try {
        await run();
      } finally {
        spy.mockRestore();
      }
      return sent;
    }

    it('reads a project in one round trip, rate limit included', async () => {
      const sent = await statementsDuring(async () => {
        for (let i = 0; i < 5; i++) {
          const res = await t.call(alice, 'GET', `/v1/projects/${projectId}`);
          expect(res.status).toBe(200);
          expect(res.body.data.id).toBe(projectId);
          expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
        }
      });
      expect(sent).toHaveLength(5);
      expect(sent.every((text) => /insert into rate_limits/i.test(text))).toBe(true);
    });

    it('answers a non-member 404 from the same statement, and still counts the request', async () => {
      const before = Number((await t.call(bob, 'GET', '/v1/user')).headers['x-ratelimit-remaining']);
      const sent = await statementsDuring(async () => {
        const res = await t.call(bob, 'GET', `/v1/projects/${projectId}`);
        expect(res.status).toBe(404);
        expect(Number(res.headers['x-ratelimit-remaining'])).toBe(before - 1);
      });
      expect(sent).toHaveLength(1);
    });

    it('reads the project again for a second check in the same request (after a change)', async () => {
      const res = await t.call(alice, 'PATCH', `/v1/projects/${projectId}`, {
        name: `renamed-${Date.now()}`,
      });
      expect(res.status).toBe(200);
      expect(res.body.data.name).toMatch(/^renamed-/);
      const read = await t.call(alice, 'GET', `/v1/projects/${projectId}`);
      expect(read.body.data.name).toBe(res.body.data.name);
    });
  },
);
