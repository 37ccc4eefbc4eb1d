import { ApiError } from '../api/client/index.ts';

const HINTS: Record<string, string> = {
  UNAUTHORIZED: 'Check the api-token input: create a token with `slipway token create`.',
  FORBIDDEN: "The api-token's user needs the developer role or higher in the project's organization.",
  RATE_LIMIT_EXCEEDED:
    "The api-token's hourly request quota is used up; the step retried as long as Retry-After allowed.",
};

/** The same for the exchange of the job's OIDC token: there is no api-token to check. */
const OIDC_HINTS: Record<string, string> = {
  FORBIDDEN:
    "The project's trust policies decide which jobs may deploy it: see docs/action.md#deploy-without-a-stored-token.",
};

/**
 * A failure as one message for setFailed: what the service said, and what to do about it.
 * `oidc`: the failure is the exchange of the job's OIDC token (the service's message says which
 * check failed, and the hints about api-token do not apply).
 */
export function explainError(err: unknown, opts: { oidc?: boolean } = {}): string {
  if (err instanceof ApiError) {
    const hint = (opts.oidc ? OIDC_HINTS : HINTS)[err.code];
    return `Slipway answered ${err.status} ${err.code}: ${err.message}${hint ? `\n${hint}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}
