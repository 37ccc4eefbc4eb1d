import type { Insertable, Kysely } from 'kysely';
import { ApiError } from '../../../api/errors.ts';
import type { Database, LedgerEntriesTable } from '../../platform/store/schema.ts';

/** An organization's balance in cents: the sum of its append-only entries. */
export async function balanceCents(db: Kysely<Database>, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('amount_cents'), eb.lit(0)).as('total'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  // PostgreSQL sums integers into a bigint, which its driver hands over as a string.
  return Number(row.total);
}

/** True when a charge already settled this challenge. */
export async function challengeUsed(db: Kysely<Database>, challengeId: string): Promise<boolean> {
  const row = await db
    .selectFrom('ledger_entries')
    .select('id')
    .where('challenge_id', '=', challengeId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The caller's personal organization, which pays for the paid API. */
export async function personalOrganization(
  db: Kysely<Database>,
  userId: string,
): Promise<{ id: string; name: string }> {
  const org = await db
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where('personal_user_id', '=', userId)
    .executeTakeFirst();
  if (!org) throw ApiError.notFound('Personal organization of the caller');
  return org;
}

/** Appends one entry; entries are never updated or deleted. */
export async function appendEntry(
  db: Kysely<Database>,
  entry: Insertable<LedgerEntriesTable>,
): Promise<void> {
  await db.insertInto('ledger_entries').values(entry).execute();
}
