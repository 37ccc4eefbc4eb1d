/**
 * The public entry of the billing feature: payments, credits, the ledger and plans; an organization's usage.
 * The rest of the service imports these, never another file of the folder
 * (docs/architecture.md#features).
 */
export { addCredits } from './credits.ts';
export { personalOrganization } from './ledger-store.ts';
export { MAX_TOPUP_CENTS, formatCents, parseAmount } from './money.ts';
export { PAID_OPERATIONS } from './operations.ts';
export { runPaid } from './paid-operation.ts';
export { billingRoutes } from './routes.ts';
export { lazyPaymentKey } from './secret.ts';
