import type { z } from 'zod';
import { trust } from '../routes/trust.ts';
import type { ExchangeOidcBody } from '../schemas/trust-policies.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';

/** Keyless deploys from GitHub Actions: a job's OIDC token for a short-lived Slipway token. */
export function oidcApi(c: Caller) {
  return {
    /**
     * Needs no token of its own; answers the project's token, shown this once. Sent once, never
     * retried: the service exchanges an OIDC token only once, so a resend of the same token after
     * a lost answer would be refused. To retry, ask the runner for a new OIDC token and call
     * again (the Action does: action/oidc.ts).
     */
    exchange: (body: z.input<typeof ExchangeOidcBody>, o?: CallOptions) =>
      c.call(trust.exchange, {}, { ...o, idempotencyKey: false, body }),
  };
}
