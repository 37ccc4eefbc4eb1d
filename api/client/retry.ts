/** Statuses worth another attempt: rate limited, or the service or a proxy briefly unavailable. */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

export const isRetryableStatus = (status: number) => RETRYABLE_STATUS.has(status);

/**
 * Whether a request may be sent again after an ambiguous failure. A POST without an
 * Idempotency-Key might already have run on the server (a timeout after the commit), so sending
 * it again could create a second project or deployment; with a key the server answers the first
 * result again instead.
 */
export const mayRepeat = (method: string, idempotencyKey: string | undefined) =>
  method.toUpperCase() !== 'POST' || idempotencyKey !== undefined;

/**
 * Capped exponential backoff with jitter: attempt 1 waits around `base`, then 2x, 4x... up to
 * `cap`. The wait is drawn from the upper half of the window so that clients that failed together
 * do not come back together, yet never retry at once.
 */
export function backoffDelay(attempt: number, base: number, cap: number, random: () => number): number {
  const ceiling = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/** Default `sleep`: a timer that an abort signal cuts short. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
