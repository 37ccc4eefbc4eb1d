import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/**
 * Two services on one database stand for two API processes, each remembering tokens for an
 * hour: only the notification (LISTEN/NOTIFY) can make one see what the other changed.
 */
describe.skipIf(!url)(
  `token cache across processes${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      database = await createTestDatabase();
      const env = { DATABASE_URL: database.url, SLIPWAY_TOKEN_CACHE_TTL: '1h' };
      a = await createTestApp({ env });
      b = await createTestApp({ env });
      await Promise.all([a.deps.store.notifier.ready(), b.deps.store.notifier.ready()]);
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    it('a token revoked through one process stops working in the other', async () => {
      const alice = await a.user('alice@example.com');
      const created = await a.call(alice, 'POST', '/v1/user/tokens', { name: 'shared' });
      const shared = created.body.data.token as string;
      // Process A has looked the token up and remembers it.
      expect((await a.call(shared, 'GET', '/v1/user')).status).toBe(200);
      expect((await b.call(alice, 'DELETE', `/v1/user/tokens/${created.body.data.id}`)).status).toBe(200);
      const refused = await waitFor('process A to refuse the revoked token', async () => {
        const res = await a.call(shared, 'GET', '/v1/user');
        return res.status === 401 ? res : null;
      });
      expect(refused.body.error.code).toBe('UNAUTHORIZED');
    });

    it('a plan changed through one process applies in the other', async () => {
      const bob = await a.user('bob@example.com');
      const limit = async () => Number((await a.call(bob, 'GET', '/v1/user')).headers['x-ratelimit-limit']);
      expect(await limit()).toBe(100);
      expect(
        (await b.call(bob, 'PATCH', `/v1/organizations/${bob.orgId}`, { plan: 'enterprise' })).status,
      ).toBe(200);
      await waitFor('process A to apply the new plan', async () => (await limit()) === 10_000);
    });
  },
);
