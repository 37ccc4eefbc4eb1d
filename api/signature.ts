import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries a delivery's signature. */
export const SIGNATURE_HEADER = 'X-Slipway-Signature';

const PREFIX = 'sha256=';
const HEX_DIGEST = /^[0-9a-f]{64}$/i;

const digest = (secret: string, body: string | Buffer): Buffer =>
  createHmac('sha256', secret).update(body).digest();

/** `sha256=<hex HMAC-SHA256 of body keyed with secret>`, the value of `X-Slipway-Signature`. */
export function sign(secret: string, body: string | Buffer): string {
  return PREFIX + digest(secret, body).toString('hex');
}

/**
 * True when `header` is the signature of exactly these bytes under `secret`. Pass the raw body
 * as received: re-serialising parsed JSON changes the bytes and fails the check. The prefix
 * `sha256=` is optional; anything that is not 64 hex digits is false, never an exception.
 */
export function verify(secret: string, body: string | Buffer, header: string | null | undefined): boolean {
  if (typeof header !== 'string') return false;
  const value = header.trim();
  const hex = value.startsWith(PREFIX) ? value.slice(PREFIX.length) : value;
  if (!HEX_DIGEST.test(hex)) return false;
  const given = Buffer.from(hex, 'hex');
  const expected = digest(secret, body);
  // Both are 32 bytes here (checked above), which timingSafeEqual requires; the comparison
  // itself takes the same time wherever the first differing byte is.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Standard Webhooks (https://www.standardwebhooks.com), sent beside `X-Slipway-Signature`:
 * `webhook-id` (the delivery id, the same on every retry), `webhook-timestamp` (Unix seconds of
 * this attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.
 * The timestamp is under the signature, so a captured attempt stops verifying after
 * {@link STANDARD_TOLERANCE_SECONDS}. The key is the webhook secret's UTF-8 bytes as they are
 * (Slipway's secrets are arbitrary strings, not Standard Webhooks' base64 `whsec_` keys).
 */
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
/** A `webhook-timestamp` further than this from the receiver's clock is refused: 5 minutes. */
export const STANDARD_TOLERANCE_SECONDS = 5 * 60;

const standardDigest = (secret: string, id: string, timestamp: string, body: string | Buffer): Buffer =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.`).update(body).digest();

/** The three Standard Webhooks headers of one attempt sent at `at`. */
export function signStandard(
  secret: string,
  id: string,
  at: Date,
  body: string | Buffer,
): Record<
  typeof STANDARD_ID_HEADER | typeof STANDARD_TIMESTAMP_HEADER | typeof STANDARD_SIGNATURE_HEADER,
  string
> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    [STANDARD_ID_HEADER]: id,
    [STANDARD_TIMESTAMP_HEADER]: timestamp,
    [STANDARD_SIGNATURE_HEADER]: `v1,${standardDigest(secret, id, timestamp, body).toString('base64')}`,
  };
}

export type StandardVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Checks the Standard Webhooks headers against the raw body: the timestamp within
 * {@link STANDARD_TOLERANCE_SECONDS} of `now` either way, then any `v1,` signature of the
 * space-separated list under any of `secrets` (several during a rotation), in constant time.
 */
export function verifyStandard(
  secrets: readonly string[],
  headers: { id: string | undefined; timestamp: string | undefined; signature: string | undefined },
  body: string | Buffer,
  now: Date,
): StandardVerdict {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) {
    return { ok: false, reason: 'webhook-id, webhook-timestamp and webhook-signature are all required' };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'webhook-timestamp is not Unix seconds' };
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > STANDARD_TOLERANCE_SECONDS) {
    return {
      ok: false,
      reason: 'webhook-timestamp is more than 5 minutes away from now: refusing a stale or replayed delivery',
    };
  }
  const given = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  for (const secret of secrets) {
    const expected = standardDigest(secret, id, timestamp, body);
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) return { ok: true };
  }
  return { ok: false, reason: 'webhook-signature does not match the body' };
}
