/** The rate-limit headers of the last `/v1` response that carried them. */
export interface RateLimit {
  /** Requests allowed per window (`X-RateLimit-Limit`). */
  limit: number;
  /** Requests left in the current window (`X-RateLimit-Remaining`). */
  remaining: number;
  /** Unix epoch seconds at which the window resets (`X-RateLimit-Reset`). */
  reset: number;
}

/** Reads the three headers; null unless all three are whole numbers. */
export function readRateLimit(headers: Headers): RateLimit | null {
  const num = (name: string) => {
    const raw = headers.get(name);
    if (raw === null || !/^\d+$/.test(raw.trim())) return null;
    return Number(raw.trim());
  };
  const limit = num('x-ratelimit-limit');
  const remaining = num('x-ratelimit-remaining');
  const reset = num('x-ratelimit-reset');
  if (limit === null || remaining === null || reset === null) return null;
  return { limit, remaining, reset };
}
