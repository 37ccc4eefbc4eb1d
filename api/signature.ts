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
