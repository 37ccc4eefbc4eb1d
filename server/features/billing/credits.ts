import { ApiError } from '../../../api/errors.ts';
import { randomString } from '../../core/ids.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { appendEntry, balanceCents } from './ledger-store.ts';
import { MAX_TOPUP_CENTS } from './money.ts';

export interface TopUp {
  /** `top_` id of the ledger entry. */
  id: string;
  organization: { id: string; name: string };
  /** The balance after the top-up, in cents. */
  balanceCents: number;
}

/**
 * Tops up an organization's prepaid balance (the operator's `slipway credits add`). The entry and
 * the balance read back happen in one transaction, so the balance printed includes this top-up.
 */
export async function addCredits(
  deps: Deps,
  orgIdOrName: string,
  cents: number,
  note?: string,
): Promise<TopUp> {
  if (!Number.isSafeInteger(cents) || cents <= 0 || cents > MAX_TOPUP_CENTS) {
    throw ApiError.validation([
      { path: 'amount', message: 'must be a positive amount of at most 1000000.00 with two decimals' },
    ]);
  }
  return deps.db.transaction().execute(async (tx) => {
    const org = await tx
      .selectFrom('organizations')
      .select(['id', 'name'])
      .where((eb) => eb.or([eb('id', '=', orgIdOrName), eb('name', '=', orgIdOrName)]))
      .executeTakeFirst();
    if (!org) throw ApiError.notFound(`Organization ${orgIdOrName}`);
    const id = `top_${randomString(20)}`;
    await appendEntry(tx, {
      id,
      organization_id: org.id,
      amount_cents: cents,
      kind: 'topup',
      method: null,
      reference: note ?? null,
      operation: null,
      challenge_id: null,
      user_id: null,
      created_at: deps.clock.now().toISOString(),
    });
    return { id, organization: org, balanceCents: await balanceCents(tx, org.id) };
  });
}
