/** What one probe of a production URL found (server/features/monitoring/probe-production.ts). */
export interface ProbeResult {
  /** A 2xx or 3xx answer. */
  ok: boolean;
  statusCode: number | null;
  /** Until the whole answer arrived; null without an answer. */
  responseTimeMs: number | null;
  /** Why it failed; null when ok. */
  error: string | null;
}
