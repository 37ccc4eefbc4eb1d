export { addCredits } from './credits.ts';
export { personalOrganization } from './ledger-store.ts';
export { MAX_TOPUP_CENTS, formatCents, parseAmount } from './money.ts';
export { PAID_OPERATIONS } from './operations.ts';
export { runPaid } from './paid-operation.ts';
export { billingRoutes } from './routes.ts';
export { lazyPaymentKey } from './secret.ts';
