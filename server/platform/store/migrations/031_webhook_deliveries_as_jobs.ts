import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectHelpers } from '../dialect.ts';

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event: string;
  payload: string;
  status: 'pending' | 'success' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

interface Tables {
  webhook_deliveries: DeliveryRow;
  jobs: Record<string, unknown>;
}

/*
 * This migration's own copies of the delivery job's shape (features/webhooks/delivery-job.ts), so
 * later changes to the live code never change what it did.
 */
const KIND = 'webhook.deliver';
const MAX_ATTEMPTS = 8;

/**
 * Step 3 of one durable queue (docs/architecture.md#plan-one-durable-queue): webhook deliveries
 * become jobs of kind `webhook.deliver`, claimed through server/platform/queue/queue.ts with the webhook as
 * the fair key. `subject` (the webhook's id) and the index `jobs_subject` serve the deliveries
 * list. Every row of `webhook_deliveries`, open or finished, is copied with its id (its attempts in
 * `webhook_attempts` still point at it), its attempt count, its next attempt and its status; then
 * the table is dropped (step 4), all in one transaction. Dropped rather than left: a process of
 * the previous version still running on the same database then fails loudly when it records an
 * event, instead of writing deliveries nothing sends.
 */
export const webhookDeliveriesAsJobs = (d: DialectHelpers): Migration => ({
  async up(db: Kysely<unknown>) {
    // PostgreSQL's migrator runs every migration in one transaction already; SQLite's does not.
    if (d.name === 'sqlite') await db.transaction().execute((tx) => move(tx));
    else await move(db);
  },
});

async function move(db: Kysely<unknown>) {
  await db.schema.alterTable('jobs').addColumn('subject', 'text').execute();
  // A webhook's deliveries newest first, by page or by cursor (list-deliveries.ts).
  await db.schema
    .createIndex('jobs_subject')
    .on('jobs')
    .columns(['kind', 'subject', 'created_at', 'id'])
    .where(sql.ref('subject'), 'is not', null)
    .execute();
  const t = db as unknown as Kysely<Tables>;
  let after = '';
  for (;;) {
    const rows: DeliveryRow[] = await t
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '>', after)
      .orderBy('id')
      .limit(200)
      .execute();
    if (rows.length === 0) break;
    after = rows.at(-1)!.id;
    await t.insertInto('jobs').values(rows.map(toJob)).execute();
  }
  await db.schema.dropTable('webhook_deliveries').execute();
}

function toJob(r: DeliveryRow): Record<string, unknown> {
  return {
    id: r.id,
    kind: KIND,
    payload: JSON.stringify({ event: r.event, body: r.payload }),
    // A claim held across the upgrade (next attempt moved a lease ahead) is simply due then.
    status: r.status === 'pending' ? 'queued' : r.status === 'success' ? 'done' : 'failed',
    run_at: r.next_attempt_at ?? r.updated_at,
    attempts: Number(r.attempt_count),
    max_attempts: MAX_ATTEMPTS,
    lease_until: null,
    locked_by: null,
    last_error: null,
    fair_key: r.webhook_id,
    claimed_at: null,
    ordering_key: null,
    seq: null,
    owner_user_id: null,
    dedupe_key: null,
    subject: r.webhook_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
