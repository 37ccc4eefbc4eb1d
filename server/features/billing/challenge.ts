import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeChargeRequest, type PaymentChallenge } from '../../../api/payment.ts';
import type { PaymentMethod } from './method.ts';
import type { PaidOperation } from './operations.ts';

/** How long a challenge may be paid: five minutes, as the contract says. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** The only intent this service sells. */
export const CHARGE_INTENT = 'charge';

const NONCE_BYTES = 16;
const MAC_BYTES = 32;

/** What a challenge is bound to beyond its own parameters: this operation, for this caller. */
export interface ChallengeBinding {
  operation: PaidOperation;
  userId: string;
}

/**
 * The HMAC over every parameter and the binding. A random nonce goes in first: two challenges
 * issued in the same millisecond for the same request must still be paid (and used) separately.
 */
function mac(secret: Buffer, nonce: Buffer, ch: Omit<PaymentChallenge, 'id'>, b: ChallengeBinding): Buffer {
  const fields = [
    'slipway-payment-v1',
    nonce.toString('base64url'),
    ch.realm,
    ch.method,
    ch.intent,
    ch.request,
    ch.expires ?? '',
    ch.description ?? '',
    ch.opaque ?? '',
    b.operation.method,
    b.operation.path,
    b.userId,
  ];
  // JSON keeps the fields apart: no value can be shifted into its neighbour.
  return createHmac('sha256', secret).update(JSON.stringify(fields)).digest();
}

/** A fresh challenge for `operation`, paid with `method`, valid for five minutes from `now`. */
export function issueChallenge(
  secret: Buffer,
  now: Date,
  realm: string,
  method: PaymentMethod,
  binding: ChallengeBinding,
): PaymentChallenge {
  const params = {
    realm,
    method: method.name,
    intent: CHARGE_INTENT,
    request: encodeChargeRequest(method.describe(binding.operation.price)),
    expires: new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString(),
  };
  const nonce = randomBytes(NONCE_BYTES);
  const id = Buffer.concat([nonce, mac(secret, nonce, params, binding)]).toString('base64url');
  return { id, ...params };
}

/** True when `challenge.id` was issued by this server for exactly these parameters and this binding. */
export function challengeMatches(
  secret: Buffer,
  challenge: PaymentChallenge,
  binding: ChallengeBinding,
): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(challenge.id)) return false;
  const raw = Buffer.from(challenge.id, 'base64url');
  if (raw.length !== NONCE_BYTES + MAC_BYTES) return false;
  const expected = mac(secret, raw.subarray(0, NONCE_BYTES), challenge, binding);
  return timingSafeEqual(raw.subarray(NONCE_BYTES), expected);
}
