/**
 * Waits before each retry: 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 24 h (CONTRACT.md). A delivery
 * gets one first attempt plus one retry per entry, so eight attempts in all over about 33 hours.
 */
export const RETRY_DELAYS_MS = [
  10_000,
  60_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  6 * 3_600_000,
  24 * 3_600_000,
] as const;

/** Attempts a delivery gets before it is `failed`. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Up to this fraction is added or taken off each delay, so a receiver that was down is not hit all at once. */
export const JITTER = 0.1;

/**
 * The delay before the attempt after attempt number `attempt` (1-based) failed, or null when
 * that was the last one. `random` is injectable for tests.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 + JITTER * (2 * random() - 1)));
}
