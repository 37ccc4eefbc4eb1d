import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeRateLimit } from '../../../server/platform/http/rate-limit.ts';
import { prepared } from '../../../server/platform/store/prepared.ts';
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

    it('runs declared statements as named prepared statements, planned once per connection', async () => {
      const mine = prepared<[], { n: string }>(0, (d) =>
        d.selectNoFrom(sql<string>`(select count(*) from pg_prepared_statements)::text`.as('n')),
      );
      // Each pooled connection lists what it prepared; this statement is among them once run.
      const [row] = await a.deps.store.run(mine);
      expect(Number(row!.n)).toBeGreaterThanOrEqual(1);
      const names = prepared<[], { name: string }>(0, (d) =>
        d.selectFrom(sql`pg_prepared_statements`.as('s')).select(sql<string>`name`.as('name')),
      );
      const listed = (await a.deps.store.run(names)).map((r) => r.name);
      expect(listed.some((name) => /^slipway_\d+_\d+$/.test(name))).toBe(true);
    });

    it('prepares again when a migration changes what a prepared statement reads', async () => {
      await a.deps.db.schema.createTable('plan_probe').addColumn('id', 'integer').execute();
      await sql`insert into plan_probe (id) values (1)`.execute(a.deps.db);
      const everything = prepared<[], Record<string, unknown>>(0, (d) =>
        d.selectFrom(sql`plan_probe`.as('t')).selectAll(),
      );
      // A few runs: the pool's connections that ran it keep its plan.
      for (let i = 0; i < 5; i++) expect(await a.deps.store.run(everything)).toEqual([{ id: 1 }]);
      await a.deps.db.schema.alterTable('plan_probe').addColumn('note', 'text').execute();
      expect(await a.deps.store.run(everything)).toEqual([{ id: 1, note: null }]);
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
