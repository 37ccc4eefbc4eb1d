import { expect, it } from 'vitest';
import { createCipher } from '../../server/core/secrets.ts';
import { createJobQueue } from '../../server/platform/queue/queue.ts';
import { startDeliveryWorker } from '../../server/features/webhooks/delivery-worker.ts';
import type { DeliveryDeps } from '../../server/features/webhooks/delivery-worker.ts';
import { ManualClock } from '../helpers/clock.ts';
import { readDeliveries } from '../helpers/deliveries.ts';
import { withMigratingStore } from '../helpers/migrating-store.ts';
import { startStub } from '../helpers/stub-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

it('moves the deliveries stored before into jobs: finished ones listed as they were, due ones delivered after', async () => {
  const rx = await startStub((_req, res) => {
    res.writeHead(200);
    res.end();
  });
  try {
    await withMigratingStore('slipway-deliveries-as-jobs-', async ({ store, migrator }) => {
      const clock = new ManualClock();
      const ms = clock.now().getTime();
      const at = (offset: number) => new Date(ms + offset).toISOString();
      const cipher = createCipher(Buffer.alloc(32, 9));
      const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
      expect((await migrator.migrateTo('030_github_events_as_jobs')).error).toBeUndefined();
      await db
        .insertInto('organizations')
        .values({
          id: 'org_a',
          name: 'a',
          display_name: 'a',
          plan: 'free',
          created_at: at(0),
          updated_at: at(0),
        })
        .execute();
      await db
        .insertInto('projects')
        .values({
          id: 'prj_a',
          organization_id: 'org_a',
          name: 'a',
          repository_url: 'https://example.com/r.git',
          branch: 'main',
          status: 'active',
          production_host: 'a',
          created_at: at(0),
          updated_at: at(0),
        })
        .execute();
      await db
        .insertInto('webhooks')
        .values({
          id: 'whk_a',
          project_id: 'prj_a',
          url: `${rx.url}/hook`,
          events: JSON.stringify(['deployment.created']),
          secret_ciphertext: cipher.encrypt('whsec-0123456789abcdef'),
          active: 1,
          created_at: at(0),
          updated_at: at(0),
        })
        .execute();
      const body = (n: number) =>
        JSON.stringify({ event: 'deployment.created', timestamp: at(-60_000), data: { n } });
      const delivery = (id: string, n: number, over: Record<string, unknown>) => ({
        id,
        webhook_id: 'whk_a',
        event: 'deployment.created',
        payload: body(n),
        created_at: at(-60_000 + n),
        updated_at: at(-60_000 + n),
        ...over,
      });
      await db
        .insertInto('webhook_deliveries')
        .values([
          delivery('whd_done', 1, { status: 'success', attempt_count: 1, next_attempt_at: null }),
          delivery('whd_failed', 2, { status: 'failed', attempt_count: 8, next_attempt_at: null }),
          delivery('whd_retry', 3, { status: 'pending', attempt_count: 2, next_attempt_at: at(3_600_000) }),
          delivery('whd_due', 4, { status: 'pending', attempt_count: 0, next_attempt_at: at(-1000) }),
        ])
        .execute();
      await db
        .insertInto('webhook_attempts')
        .values({ delivery_id: 'whd_done', at: at(-59_000), status_code: 200, duration_ms: 12, error: null })
        .execute();

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const tables = (await store.db.introspection.getTables()).map((t) => t.name);
      expect(tables).not.toContain('webhook_deliveries');
      const before = await readDeliveries(store.db, { webhookId: 'whk_a' });
      expect(before.map((d) => [d.id, d.status, d.attempt_count, d.next_attempt_at, d.payload])).toEqual([
        ['whd_done', 'success', 1, null, body(1)],
        ['whd_failed', 'failed', 8, null, body(2)],
        ['whd_retry', 'pending', 2, at(3_600_000), body(3)],
        ['whd_due', 'pending', 0, at(-1000), body(4)],
      ]);

      const deps = {
        db: store.db,
        clock,
        config: { webhookAllowPrivate: true },
        cipher,
        log: silent,
        queue: createJobQueue(store.db, store.dialect, clock),
      } as unknown as DeliveryDeps;
      const worker = startDeliveryWorker(deps, { pollMs: 20 });
      try {
        await waitFor('the due delivery', () => rx.requests.length === 1);
        expect(rx.requests[0]!.headers['x-slipway-delivery']).toBe('whd_due');
        await waitFor(
          'its success',
          async () => (await readDeliveries(store.db, { id: 'whd_due' }))[0]?.status === 'success',
        );
        await worker.idle();
      } finally {
        await worker.stop(0);
      }
      const after = await readDeliveries(store.db, { webhookId: 'whk_a' });
      expect(after.map((d) => [d.id, d.status, d.attempt_count])).toEqual([
        ['whd_done', 'success', 1],
        ['whd_failed', 'failed', 8],
        ['whd_retry', 'pending', 2],
        ['whd_due', 'success', 1],
      ]);
      // Only the due one went out; the attempts of before still belong to theirs.
      expect(rx.requests).toHaveLength(1);
      const attempts = await db
        .selectFrom('webhook_attempts')
        .select(['delivery_id', 'status_code'])
        .orderBy('delivery_id')
        .execute();
      expect(attempts.map((a) => [a.delivery_id, Number(a.status_code)])).toEqual([
        ['whd_done', 200],
        ['whd_due', 200],
      ]);
    });
  } finally {
    await rx.close();
  }
});
