/** Why a payment was not taken; each reason has its own message so the client knows what to fix. */
export type RefusalReason =
  | 'missing'
  | 'malformed'
  | 'unsupported-method'
  | 'wrong-intent'
  | 'wrong-amount'
  | 'wrong-operation'
  | 'unknown-challenge'
  | 'expired'
  | 'used'
  | 'insufficient-funds'
  | 'invalid-payload';

/**
 * A refused payment: the paid route answers 402 with `message` and a fresh challenge. Thrown from
 * inside the operation's transaction too, which rolls the operation back.
 */
export class PaymentRefused extends Error {
  override name = 'PaymentRefused';
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}
