import { z } from 'zod';
import { id, PageQuery, Timestamp } from './common.ts';

/** An amount of money: a decimal string with two places, never a float. */
export const Money = z.object({
  /** Decimal string with two places, e.g. `"24.00"`. */
  amount: z.string().regex(/^\d+\.\d{2}$/),
  /** ISO 4217 code: `USD`. */
  currency: z.literal('USD'),
});
export type Money = z.infer<typeof Money>;

/** One paid operation taken from an organization's prepaid balance. */
export const Charge = z.object({
  /** `chg_` identifier: the `reference` of the operation's Payment-Receipt. */
  id: id('chg'),
  /** What was taken, as a positive amount. */
  amount: z.string().regex(/^\d+\.\d{2}$/),
  /** ISO 4217 code: `USD`. */
  currency: z.literal('USD'),
  /** The paid operation, e.g. `POST /api/v1/projects`. */
  operation: z.string(),
  /** The resource the operation created (`prj_...`, `dpl_...`). */
  reference: z.string().nullable(),
  /** The payment method that paid: `ledger`. */
  method: z.string(),
  /** The user whose request paid. */
  userId: z.string().nullable(),
  createdAt: Timestamp,
});
export type Charge = z.infer<typeof Charge>;

/** `GET /v1/organizations/<id>/billing`: the balance and a page of charges, newest first. */
export const Billing = z.object({
  /** What is left to spend: top-ups minus charges, never below zero. */
  balance: Money,
  /** One page of charges (see `meta`). */
  charges: z.array(Charge),
});
export type Billing = z.infer<typeof Billing>;

/** `page` and `limit` of the charges. */
export const BillingQuery = PageQuery;
export type BillingQuery = z.infer<typeof BillingQuery>;
