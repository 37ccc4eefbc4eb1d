import {
  decodeChargeRequest,
  parseCredential,
  PaymentFormatError,
  type PaymentCredential,
} from '../../../api/payment.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { challengeMatches, CHARGE_INTENT } from './challenge.ts';
import type { PaymentContext, PaymentMethod } from './method.ts';
import { findMethod, PAYMENT_METHODS } from './methods.ts';
import { formatCents } from './money.ts';
import { operationName, PAID_OPERATIONS, type PaidOperation } from './operations.ts';
import { PaymentRefused } from './refusal.ts';

/** A credential that passed every check that needs no transaction. */
export interface VerifiedPayment {
  method: PaymentMethod;
  ctx: PaymentContext;
}

const PAY_FRESH = 'pay the fresh challenge in WWW-Authenticate';

function readCredential(header: string | undefined, operation: PaidOperation): PaymentCredential {
  if (!header) {
    throw new PaymentRefused(
      'missing',
      `${operationName(operation)} costs ${formatCents(operation.price.amountCents)} USD: pay the challenge ` +
        'in WWW-Authenticate and repeat the request with "Payment-Authorization: Payment <credential>"',
    );
  }
  try {
    return parseCredential(header);
  } catch (err) {
    if (!(err instanceof PaymentFormatError)) throw err;
    throw new PaymentRefused(
      'malformed',
      `Payment-Authorization is not a Payment credential (${err.message}); ${PAY_FRESH}`,
    );
  }
}

/** The amount and currency the challenge asks for must be this operation's price, in this method. */
function checkAmount(credential: PaymentCredential, method: PaymentMethod, operation: PaidOperation) {
  const expected = method.describe(operation.price);
  let asked;
  try {
    asked = decodeChargeRequest(credential.challenge);
  } catch (err) {
    if (!(err instanceof PaymentFormatError)) throw err;
    throw new PaymentRefused(
      'malformed',
      `The challenge's request is unreadable (${err.message}); ${PAY_FRESH}`,
    );
  }
  if (asked.amount !== expected.amount || asked.currency !== expected.currency) {
    throw new PaymentRefused(
      'wrong-amount',
      `The challenge asks for ${asked.amount} ${asked.currency} (base units) but ${operationName(operation)} ` +
        `costs ${expected.amount} ${expected.currency}; ${PAY_FRESH}`,
    );
  }
}

/** The HMAC proves the parameters are ours, for this operation and this caller; expiry is checked after. */
function checkChallenge(deps: Deps, actor: Actor, credential: PaymentCredential, operation: PaidOperation) {
  const secret = deps.paymentKey();
  const challenge = credential.challenge;
  if (!challengeMatches(secret, challenge, { operation, userId: actor.userId })) {
    const other = Object.values(PAID_OPERATIONS).find(
      (op) =>
        op.path !== operation.path &&
        challengeMatches(secret, challenge, { operation: op, userId: actor.userId }),
    );
    if (other) {
      throw new PaymentRefused(
        'wrong-operation',
        `This challenge was issued for ${operationName(other)}, not ${operationName(operation)}; ${PAY_FRESH}`,
      );
    }
    throw new PaymentRefused(
      'unknown-challenge',
      `The challenge id is unknown, was issued to another user, or its parameters were changed; ${PAY_FRESH}`,
    );
  }
  const expires = challenge.expires === undefined ? NaN : Date.parse(challenge.expires);
  if (!(expires > deps.clock.now().getTime())) {
    throw new PaymentRefused('expired', `The challenge expired at ${challenge.expires}; ${PAY_FRESH}`);
  }
}

/**
 * Checks a `Payment-Authorization` value for `operation` by `actor`: format, method, intent,
 * amount, the challenge id's HMAC and binding, expiry, then the method's own payload check.
 * Throws PaymentRefused naming the first problem. Whether it was used before and whether the
 * balance suffices are decided in the operation's transaction (see PaymentMethod.authorize).
 */
export async function verifyCredential(
  deps: Deps,
  actor: Actor,
  operation: PaidOperation,
  header: string | undefined,
): Promise<VerifiedPayment> {
  const credential = readCredential(header, operation);
  const method = findMethod(credential.challenge.method);
  if (!method) {
    throw new PaymentRefused(
      'unsupported-method',
      `Payment method "${credential.challenge.method}" is not accepted; use ${PAYMENT_METHODS.map((m) => m.name).join(' or ')}`,
    );
  }
  if (credential.challenge.intent !== CHARGE_INTENT) {
    throw new PaymentRefused(
      'wrong-intent',
      `Intent "${credential.challenge.intent}" is not offered here; this operation is a "${CHARGE_INTENT}"`,
    );
  }
  checkAmount(credential, method, operation);
  checkChallenge(deps, actor, credential, operation);
  const ctx: PaymentContext = {
    deps,
    actor,
    operation,
    challenge: credential.challenge,
    payload: credential.payload,
  };
  await method.verify(ctx);
  return { method, ctx };
}
