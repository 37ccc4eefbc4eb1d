import {
  decodeChargeRequest,
  formatCredential,
  parsePaymentChallenges,
  PaymentFormatError,
} from '../payment.ts';
import type { PaymentRequiredHandler } from './payment.ts';

export interface LedgerPayerOptions {
  /**
   * The most one call may cost, in the currency's smallest unit (cents): a challenge asking for
   * more is not paid and the 402 is thrown. Default: no limit.
   */
  maxAmount?: number;
}

/**
 * Pays `402 Payment Required` answers of the paid `/api/v1` operations with the `ledger` method
 * (the caller's personal organization's prepaid balance), for `createClient({ onPaymentRequired })`.
 * It pays once per call: a second 402 means the payment itself was refused (balance too small,
 * say), and its message is thrown as an ApiError. The client repeats the request with the same
 * Idempotency-Key, so paying can never run the operation twice.
 */
export function ledgerPayer(options: LedgerPayerOptions = {}): PaymentRequiredHandler {
  return async ({ wwwAuthenticate, attempt }) => {
    if (attempt > 0 || !wwwAuthenticate) return null;
    try {
      const challenge = parsePaymentChallenges(wwwAuthenticate).find(
        (c) => c.method === 'ledger' && c.intent === 'charge',
      );
      if (!challenge) return null;
      if (
        options.maxAmount !== undefined &&
        Number(decodeChargeRequest(challenge).amount) > options.maxAmount
      ) {
        return null;
      }
      return { 'payment-authorization': formatCredential({ challenge, payload: {} }) };
    } catch (err) {
      // A challenge this client cannot read is not paid: the 402 is thrown as it came.
      if (err instanceof PaymentFormatError) return null;
      throw err;
    }
  };
}
