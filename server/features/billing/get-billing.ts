import type { Billing, BillingQuery, Charge } from '../../../api/schemas/billing.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../platform/http/pagination.ts';
import { requireOrganization } from '../identity/index.ts';
import { balanceCents } from './ledger-store.ts';
import { formatCents } from './money.ts';

/** Any member reads the organization's balance and its charges, newest first. */
export async function getBilling(
  deps: Deps,
  actor: Actor,
  idOrName: string,
  q: BillingQuery,
): Promise<{ billing: Billing; page: Omit<ListPage<unknown>, 'items'> }> {
  const { org } = await requireOrganization(deps, actor, idOrName, 'viewer');
  const charges = deps.db
    .selectFrom('ledger_entries')
    .where('organization_id', '=', org.id)
    .where('kind', '=', 'charge');
  const balance = await balanceCents(deps.db, org.id);
  const { items: rows, ...page } = await readPage(charges.selectAll(), charges, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
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
    page,
  };
}
