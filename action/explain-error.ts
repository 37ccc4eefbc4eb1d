import { ApiError } from '../api/client/index.ts';

const HINTS: Record<string, string> = {
  UNAUTHORIZED: 'Check the api-token input: create a token with `slipway token create`.',
  FORBIDDEN: "The api-token's user needs the developer role or higher in the project's organization.",
  RATE_LIMIT_EXCEEDED:
    "The api-token's hourly request quota is used up; the step retried as long as Retry-After allowed.",
};

/** A failure as one message for setFailed: what the service said, and what to do about it. */
export function explainError(err: unknown): string {
  if (err instanceof ApiError) {
    const hint = HINTS[err.code];
    return `Slipway answered ${err.status} ${err.code}: ${err.message}${hint ? `\n${hint}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}
