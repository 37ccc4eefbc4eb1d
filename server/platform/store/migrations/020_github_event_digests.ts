import { createHash } from 'node:crypto';
import type { Kysely, Migration } from 'kysely';

interface Row {
  seq: number;
  owner_user_id: string;
  name: string;
  body: string;
  body_sha256: string | null;
}

/**
 * GitHub signs only a delivery's body, so a captured delivery sent again under a new delivery id
 * verifies: the queue keeps an event once per event name and body digest too
 * (server/features/github/events/store-event.ts). Events stored before get their digest here,
 * the first of each (owner, name, body) only: later copies were the replays this stops.
 */
export const githubEventDigests: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('github_events').addColumn('body_sha256', 'text').execute();
    const d = db as unknown as Kysely<{ github_events: Row }>;
    const seen = new Set<string>();
    let after = -1;
    for (;;) {
      // A few rows at a time: a body may be 25 MB.
      const rows = await d
        .selectFrom('github_events')
        .select(['seq', 'owner_user_id', 'name', 'body'])
        .where('seq', '>', after)
        .orderBy('seq')
        .limit(20)
        .execute();
      if (rows.length === 0) break;
      for (const r of rows) {
        after = Number(r.seq);
        const digest = createHash('sha256').update(r.body, 'utf8').digest('hex');
        const key = `${r.owner_user_id}\0${r.name}\0${digest}`;
        if (seen.has(key)) continue;
        seen.add(key);
        await d.updateTable('github_events').set({ body_sha256: digest }).where('seq', '=', r.seq).execute();
      }
    }
    await db.schema
      .createIndex('github_events_body')
      .on('github_events')
      .columns(['owner_user_id', 'name', 'body_sha256'])
      .unique()
      .execute();
  },
};
