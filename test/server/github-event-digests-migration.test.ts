import { expect, it } from 'vitest';
import { withMigratingStore } from '../helpers/migrating-store.ts';

it('gives events stored before a body digest, the first of each replayed body only', async () => {
  await withMigratingStore('slipway-digest-migration-', async ({ store, migrator }) => {
    const now = new Date().toISOString();
    const db = store.db as never as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    expect((await migrator.migrateTo('019_used_oidc_tokens')).error).toBeUndefined();
    await db.insertInto('users').values({ id: 'usr_a', email: 'a@example.com', created_at: now }).execute();
    const event = (id: string, body: string) => ({
      id,
      owner_user_id: 'usr_a',
      delivery_id: `d-${id}`,
      name: 'pull_request',
      body,
      signature: `sha256=${'a'.repeat(64)}`,
      ordering_key: 'k',
      status: 'done',
      attempts: 1,
      next_attempt_at: now,
      received_at: now,
    });
    // A replay stored under a new delivery id before the upgrade: the same body twice.
    await db
      .insertInto('github_events')
      .values([event('ghe_1', '{"n":1}'), event('ghe_2', '{"n":1}'), event('ghe_3', '{"n":2}')])
      .execute();
    // Migration 030 moves the events into jobs (github-events-as-jobs-migration.test.ts).
    expect((await migrator.migrateTo('020_github_event_digests')).error).toBeUndefined();
    const rows = await db.selectFrom('github_events').select(['id', 'body_sha256']).orderBy('seq').execute();
    expect(rows.map((r) => [r.id, typeof r.body_sha256 === 'string' ? r.body_sha256.length : null])).toEqual([
      ['ghe_1', 64],
      ['ghe_2', null],
      ['ghe_3', 64],
    ]);
  });
});
