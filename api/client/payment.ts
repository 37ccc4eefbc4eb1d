/**
 * Extension point for paid operations (`/api/v1`, HTTP 402 with a `WWW-Authenticate: Payment ...`
 * challenge). The client does not speak any payment method itself: a handler given as
 * `onPaymentRequired` decides whether and how to pay, and returns the headers (for instance
 * `Payment-Authorization`) to repeat the request with. The repeat reuses the request's
 * Idempotency-Key, so paying and retrying can never run the operation twice.
 */
export interface PaymentChallenge {
  /** Method and path of the request that asked for payment, e.g. `POST /api/v1/projects`. */
  method: string;
  path: string;
  /** The raw `WWW-Authenticate` header (one or more `Payment` challenges), or null if absent. */
  wwwAuthenticate: string | null;
  /** The parsed JSON body of the 402 (`{ code, message, challengeId }`), or null. */
  body: unknown;
  /** How many times payment was already attempted for this call (0 on the first 402). */
  attempt: number;
}

/** Headers to add to the repeated request, or null to give up and throw the 402 as an ApiError. */
export type PaymentRequiredHandler = (challenge: PaymentChallenge) => Promise<Record<string, string> | null>;

/** How many 402s one call answers with a payment before giving up (a fresh challenge may follow a stale one). */
export const MAX_PAYMENT_ATTEMPTS = 2;
