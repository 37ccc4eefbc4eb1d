import type { z } from 'zod';
import { ExchangedToken, type ExchangeOidcBody } from '../schemas/trust-policies.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';

/** Keyless deploys from GitHub Actions: a job's OIDC token for a short-lived Slipway token. */
export function oidcApi(c: Caller) {
  return {
    /** Needs no token of its own; answers the project's token, shown this once. */
    exchange: (body: z.input<typeof ExchangeOidcBody>, o?: CallOptions) =>
      c.data(ExchangedToken, 'POST', '/v1/oidc/token', { ...o, body }),
  };
}
