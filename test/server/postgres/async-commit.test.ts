import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeRateLimit } from '../../../server/http/rate-limit.ts';
import { prepared } from '../../../server/store/prepared.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

describe.skipIf(!url)(
  `frequent writes on PostgreSQL${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      database = await createTestDatabase();
      a = await createTestApp({ env: { DATABASE_URL: database.url } });
      b = await createTestApp({ env: { DATABASE_URL: database.url } });
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    const settings = [false, true].map((frequentWrite) =>
      prepared<[], { value: string }>(
        0,
        (d) => d.selectNoFrom(sql<string>`current_setting('synchronous_commit')`.as('value')),
        { frequentWrite },
      ),
    );
    const setting = (frequentWrite: boolean) => a.deps.store.run(settings[Number(frequentWrite)]!);

    it('commits frequent writes asynchronously, and nothing else', async () => {
      expect((await setting(true))[0]!.value).toBe('off');
      expect((await setting(false))[0]!.value).toBe('on');
    });

    it('keeps the count exact across two processes', async () => {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => consumeRateLimit((i % 2 ? a : b).deps, 'tok_two_processes', 25)),
      );
      expect(results.filter((r) => r.allowed)).toHaveLength(25);
      expect(
        results
          .filter((r) => r.allowed)
          .map((r) => r.remaining)
          .sort((x, y) => x - y),
      ).toEqual(Array.from({ length: 25 }, (_, i) => i));
    });
  },
);
