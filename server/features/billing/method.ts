import type { Kysely } from 'kysely';
import type { ChargeRequest, PaymentChallenge } from '../../../api/payment.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import type { Database } from '../../platform/store/schema.ts';
import type { PaidOperation, Price } from './operations.ts';

/** Everything a method needs to judge and take one payment. */
export interface PaymentContext {
  deps: Deps;
  actor: Actor;
  operation: PaidOperation;
  /** The challenge the credential answers; its id is already checked (HMAC, expiry, binding). */
  challenge: PaymentChallenge;
  /** The method-specific proof from the credential. */
  payload: Record<string, unknown>;
}

/**
 * A way to pay for an operation. The generic part (challenge ids, expiry, binding to the
 * request and the caller) is done before a method is asked anything; a method only knows money.
 * Every method throws `PaymentRefused` to refuse. To add one (Stripe is next): implement this,
 * register it in methods.ts, and document its `request` and `payload`.
 */
export interface PaymentMethod {
  /** The identifier in the challenge's `method` parameter, e.g. `ledger`. */
  readonly name: string;
  /** The `request` object of a challenge for `price`: amount, currency and method details. */
  describe(price: Price): ChargeRequest;
  /** Checks the credential's payload, outside any transaction (a card method would call its processor here). */
  verify(ctx: PaymentContext): Promise<void>;
  /**
   * Inside the operation's transaction, before the operation: makes sure the payment can be
   * taken (funds, not used before) and holds whatever lock keeps that true until commit.
   */
  authorize(tx: Kysely<Database>, ctx: PaymentContext): Promise<void>;
  /**
   * Inside the same transaction, after the operation made `reference` (the new resource's id):
   * takes the payment. Returns the charge id for the receipt. A failure rolls everything back.
   */
  capture(tx: Kysely<Database>, ctx: PaymentContext, reference: string): Promise<{ chargeId: string }>;
}
