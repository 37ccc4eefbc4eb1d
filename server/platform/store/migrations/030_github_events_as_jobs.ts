import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

interface EventRow {
  seq: number | string;
  id: string;
  owner_user_id: string;
  delivery_id: string;
  name: string;
  body: string;
  body_sha256: string | null;
  signature: string;
  ordering_key: string;
  status: 'pending' | 'running' | 'done' | 'failed';
  attempts: number;
  next_attempt_at: string;
  lease: string | null;
  lease_until: string | null;
  last_error: string | null;
  received_at: string;
  finished_at: string | null;
}

interface Tables {
  github_events: EventRow;
  jobs: Record<string, unknown>;
}

/*
 * This migration's own copies of the event job's shape (features/github/events/event-job.ts), so
 * later changes to the live code never change what it did.
 */
const KIND = 'github.event';
const MAX_ATTEMPTS = 10;

/**
 * Step 2 of one durable queue (docs/architecture.md#plan-one-durable-queue): the GitHub App's
 * events become jobs of kind `github.event`, claimed through server/platform/queue/queue.ts. Every row of
 * `github_events` is copied, with its id (a claim the App holds across the upgrade still finishes),
 * its order (`seq`), its claim (the lease token becomes the holder, `locked_by`) and its digest (as
 * the dedupe key); then the table is dropped, all in one transaction. Dropped rather than left:
 * a process of the previous version still running on the same database then fails loudly when it
 * stores an event, instead of storing it where nothing claims it any more.
 */
export const githubEventsAsJobs = (d: DialectHelpers): Migration => ({
  async up(db: Kysely<unknown>) {
    // PostgreSQL's migrator runs every migration in one transaction already; SQLite's does not.
    if (d.name === 'sqlite') await db.transaction().execute((tx) => move(tx, d));
    else await move(db, d);
  },
});

async function move(db: Kysely<unknown>, d: DialectHelpers) {
  const t = db as unknown as Kysely<Tables>;
  let after: number | string = -1;
  for (;;) {
    // A few rows at a time: a body may be 25 MB.
    const rows: EventRow[] = await t
      .selectFrom('github_events')
      .selectAll()
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(10)
      .execute();
    if (rows.length === 0) break;
    after = rows.at(-1)!.seq;
    await t.insertInto('jobs').values(rows.map(toJob)).execute();
  }
  if (d.name === 'postgres') {
    await sql`select setval('jobs_seq', (select coalesce(max(seq), 0) + 1 from jobs), false)`.execute(db);
  }
  await db.schema.dropTable('github_events').execute();
}

function toJob(e: EventRow): Record<string, unknown> {
  const running = e.status === 'running';
  return {
    id: e.id,
    kind: KIND,
    // deliveryId first: the service reads a duplicate's delivery id from the payload's first bytes.
    payload: JSON.stringify({
      deliveryId: e.delivery_id,
      name: e.name,
      body: e.body,
      signature: e.signature,
    }),
    status: e.status === 'pending' ? 'queued' : e.status,
    run_at: e.next_attempt_at,
    // The queue counts claims, the old table finished tries: a running event's claim is one more.
    attempts: Number(e.attempts) + (running ? 1 : 0),
    max_attempts: MAX_ATTEMPTS,
    lease_until: running ? e.lease_until : null,
    locked_by: e.lease,
    last_error: e.last_error,
    fair_key: null,
    claimed_at: null,
    ordering_key: `${e.owner_user_id}/${e.ordering_key}`,
    seq: e.seq,
    owner_user_id: e.owner_user_id,
    dedupe_key: e.body_sha256 === null ? null : `${KIND}:${e.owner_user_id}:${e.name}:${e.body_sha256}`,
    created_at: e.received_at,
    updated_at: e.finished_at ?? e.received_at,
  };
}
