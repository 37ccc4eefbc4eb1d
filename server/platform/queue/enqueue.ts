import { sql, type Kysely } from 'kysely';
import { newId } from '../../core/ids.ts';
import type { Database } from '../store/schema.ts';
import { nowIso, type QueueContext } from './context.ts';
import type { EnqueueOptions } from './types.ts';

/** Stores a job in `tx` (the caller's transaction) and returns its id. */
export async function enqueue(
  q: QueueContext,
  tx: Kysely<Database>,
  kind: string,
  payload: unknown,
  opts: EnqueueOptions = {},
): Promise<string> {
  const id = opts.id ?? newId('job');
  await insertJob(q, tx, kind, payload, { ...opts, id }).execute();
  return id;
}

export async function enqueueOnce(
  q: QueueContext,
  tx: Kysely<Database>,
  kind: string,
  payload: unknown,
  opts: EnqueueOptions,
): Promise<{ id: string; duplicate: boolean }> {
  const id = opts.id ?? newId('job');
  // Either key may be taken: the id (a stable one) or the dedupe key.
  const res = await insertJob(q, tx, kind, payload, { ...opts, id })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if (Number(res.numInsertedOrUpdatedRows ?? 0) > 0) return { id, duplicate: false };
  const kept = await tx
    .selectFrom('jobs')
    .select('id')
    .where((eb) =>
      opts.dedupeKey === undefined
        ? eb('id', '=', id)
        : eb.or([eb('id', '=', id), eb('dedupe_key', '=', opts.dedupeKey)]),
    )
    .orderBy('created_at')
    .orderBy('seq')
    .executeTakeFirst();
  // Gone between the insert and the read (pruned that instant): store it after all.
  return kept ? { id: kept.id, duplicate: true } : enqueueOnce(q, tx, kind, payload, opts);
}

function insertJob(
  q: QueueContext,
  tx: Kysely<Database>,
  kind: string,
  payload: unknown,
  opts: EnqueueOptions,
) {
  const at = nowIso(q);
  const key = opts.orderingKey ?? null;
  // SQLite writes one statement at a time, so one more than the key's highest is unique there.
  const seq =
    key === null
      ? null
      : q.dialect.name === 'postgres'
        ? sql<string>`nextval('jobs_seq')`
        : sql<number>`(select coalesce(max(seq), 0) + 1 from jobs where ordering_key = ${key})`;
  return tx.insertInto('jobs').values({
    id: opts.id ?? newId('job'),
    kind,
    payload: JSON.stringify(payload),
    status: 'queued',
    run_at: (opts.runAt ?? q.clock.now()).toISOString(),
    attempts: 0,
    max_attempts: opts.maxAttempts ?? 2,
    lease_until: null,
    locked_by: null,
    last_error: null,
    fair_key: opts.fairKey ?? null,
    claimed_at: null,
    ordering_key: key,
    seq,
    owner_user_id: opts.ownerUserId ?? null,
    dedupe_key: opts.dedupeKey ?? null,
    subject: opts.subject ?? null,
    created_at: at,
    updated_at: at,
  });
}
