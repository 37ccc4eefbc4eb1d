import type { Billing, BillingQuery, Charge } from '../../api/schemas/billing.ts';
import { offsetOf } from '../http/route.ts';
import type { Actor, Deps } from '../services/deps.ts';
import { requireOrganization } from '../services/organizations/find-organization.ts';
import { balanceCents } from './ledger-store.ts';
import { formatCents } from './money.ts';

/** Any member reads the organization's balance and its charges, newest first. */
export async function getBilling(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  q: BillingQuery,
): Promise<{ billing: Billing; total: number }> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'viewer');
  const charges = deps.db
    .selectFrom('ledger_entries')
    .where('organization_id', '=', org.id)
    .where('kind', '=', 'charge');
  const [balance, rows, count] = await Promise.all([
    balanceCents(deps.db, org.id),
    charges
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(q.limit)
      .offset(offsetOf(q))
      .execute(),
    charges.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  const items: Charge[] = rows.map((r) => ({
    id: r.id,
    amount: formatCents(-r.amount_cents),
    currency: 'USD',
    operation: r.operation ?? '',
    reference: r.reference,
    method: r.method ?? 'ledger',
    userId: r.user_id,
    createdAt: r.created_at,
  }));
  return {
    billing: { balance: { amount: formatCents(balance), currency: 'USD' }, charges: items },
    total: Number(count.n),
  };
}
