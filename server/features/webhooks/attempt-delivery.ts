import { performance } from 'node:perf_hooks';
import { sign, SIGNATURE_HEADER, signStandard } from '../../../api/signature.ts';
import { raceSignal } from '../../core/race-signal.ts';
import type { PostDelivery } from './post-pinned.ts';
import type { AttemptOutcome } from './record-attempt.ts';
import { RefusedAddressError, resolveTarget, type LookupAll } from '../../core/ssrf.ts';

/** Sent as `User-Agent` on every delivery. */
export const USER_AGENT = 'Slipway-Webhooks/1';

/** What one attempt needs from outside. */
export interface AttemptIo {
  lookup: LookupAll;
  post: PostDelivery;
  allowPrivate: boolean;
  /** The whole attempt (look-up, connection, answer) must finish within this. */
  timeoutMs: number;
  /** Aborts the attempt when the worker stops; the outcome is then `interrupted`. */
  stop: AbortSignal;
}

/**
 * The headers of one attempt sent at `at`: `X-Slipway-Signature` covers exactly `body`; the
 * Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) cover the
 * delivery id, the attempt's time and `body`, so a captured attempt goes stale after 5 minutes.
 */
export function deliveryHeaders(
  delivery: { id: string; event: string },
  secret: string,
  body: Buffer,
  at: Date,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Slipway-Event': delivery.event,
    'X-Slipway-Delivery': delivery.id,
    [SIGNATURE_HEADER]: sign(secret, body),
    ...signStandard(secret, delivery.id, at, body),
  };
}

/** A short, useful line for the attempt log: what went wrong, with the system's error code. */
export function describeError(err: unknown, hostname: string): string {
  const e = err as NodeJS.ErrnoException;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `could not resolve ${hostname} (${code})`;
  const message = e instanceof Error ? e.message : String(err);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

export type AttemptResult =
  | { kind: 'done'; durationMs: number; outcome: AttemptOutcome }
  /** The worker stopped mid-attempt: nothing is recorded and the claim is given back. */
  | { kind: 'interrupted' };

/**
 * One POST of a stored delivery: resolve and check the address (SSRF rule), sign the stored bytes,
 * send them, and classify the answer. Never throws; every failure is an outcome.
 */
export async function attemptDelivery(
  /** `at`: when the attempt is sent (the payload's `timestamp`, and `webhook-timestamp`). */
  delivery: { id: string; event: string; payload: string; url: string; secret: string; at: Date },
  io: AttemptIo,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const timeout = AbortSignal.timeout(io.timeoutMs);
  const signal = AbortSignal.any([timeout, io.stop]);
  const url = new URL(delivery.url);
  const body = Buffer.from(delivery.payload, 'utf8');
  const failed = (statusCode: number | null, error: string | null, final = false): AttemptResult => ({
    kind: 'done',
    durationMs: elapsed(),
    outcome: { kind: 'failed', statusCode, error, final },
  });
  try {
    const addresses = await raceSignal(
      resolveTarget(url.hostname, { lookup: io.lookup, allowPrivate: io.allowPrivate }),
      signal,
    );
    const statusCode = await io.post({
      url,
      addresses,
      headers: deliveryHeaders(delivery, delivery.secret, body, delivery.at),
      body,
      signal,
    });
    if (statusCode >= 200 && statusCode < 300) {
      return { kind: 'done', durationMs: elapsed(), outcome: { kind: 'delivered', statusCode } };
    }
    if (statusCode === 410)
      return { kind: 'done', durationMs: elapsed(), outcome: { kind: 'gone', statusCode } };
    return failed(statusCode, null);
  } catch (err) {
    if (io.stop.aborted) return { kind: 'interrupted' };
    if (timeout.aborted) return failed(null, `timed out after ${io.timeoutMs / 1000} s`);
    // The same rule refuses the same address next time: retrying would only repeat the refusal.
    if (err instanceof RefusedAddressError) return failed(null, err.message, true);
    return failed(null, describeError(err, url.hostname));
  }
}
