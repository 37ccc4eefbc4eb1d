/**
 * Polls `check` every few milliseconds until it returns something truthy, and returns that;
 * fails with `what` after `timeoutMs`. For effects of background workers that tests cannot await.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  /** Between checks: longer for checks that cost a request to a real app. */
  intervalMs = 5,
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | 0 | '' | null | undefined>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
