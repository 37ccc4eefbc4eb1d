import { ledgerMethod } from './ledger.ts';
import type { PaymentMethod } from './method.ts';

/** The methods this service accepts, in the order challenges offer them. */
export const PAYMENT_METHODS: readonly PaymentMethod[] = [ledgerMethod];

/** The accepted method of that name, if any. */
export const findMethod = (name: string): PaymentMethod | undefined =>
  PAYMENT_METHODS.find((m) => m.name === name);
