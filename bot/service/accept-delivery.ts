import { verify, verifyStandard } from '../../api/signature.ts';
import { WebhookPayload } from '../../api/schemas/webhooks.ts';
import type { SeenIds } from '../lib/seen-ids.ts';

/** Deliveries whose timestamp is further than this from now are refused (replay protection). */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

/** The headers of a service delivery the receiver reads. */
export interface DeliveryHeaders {
  signature: string | undefined;
  deliveryId: string | undefined;
  event: string | undefined;
  /** Standard Webhooks' `webhook-id`, `webhook-timestamp` and `webhook-signature`. */
  webhookId?: string | undefined;
  webhookTimestamp?: string | undefined;
  webhookSignature?: string | undefined;
}

/** What to answer, and the delivery to act on when it was accepted. */
export type Acceptance =
  | { kind: 'refused'; status: 401 | 400; error: string }
  | { kind: 'duplicate'; status: 200 }
  | { kind: 'accepted'; status: 202; delivery: WebhookPayload; deliveryId: string };

/**
 * Checks a service delivery in the contract's order: the signature over the raw bytes first
 * (nothing unauthenticated is parsed), then the shape, then the timestamp, and only then the
 * delivery id, so a forged or malformed request cannot mark an id as seen.
 *
 * The signature: Standard Webhooks' `webhook-signature` (over the id, the attempt's
 * `webhook-timestamp` and the body; the timestamp within 5 minutes) whenever the delivery has it,
 * and then nothing else counts: a bad or stale one is refused whatever `X-Slipway-Signature`
 * says. A delivery without it is checked by `X-Slipway-Signature` as before: a service not yet
 * upgraded (a worker on another machine during a rolling upgrade) sends only that, and the body's
 * own `timestamp`, under that signature, still bounds a replay to the same 5 minutes.
 */
export function acceptDelivery(
  raw: Buffer,
  headers: DeliveryHeaders,
  deps: { secret: string; previousSecret?: string | undefined; seen: SeenIds; now: () => Date },
): Acceptance {
  // During a rotation the previous secret is accepted too (deliveries signed before the switch).
  const secrets = [deps.secret, ...(deps.previousSecret ? [deps.previousSecret] : [])];
  let deliveryId = headers.deliveryId;
  if ((headers.webhookSignature ?? headers.webhookTimestamp ?? headers.webhookId) !== undefined) {
    const verdict = verifyStandard(
      secrets,
      { id: headers.webhookId, timestamp: headers.webhookTimestamp, signature: headers.webhookSignature },
      raw,
      deps.now(),
    );
    if (!verdict.ok) {
      const stale = verdict.reason.startsWith('webhook-timestamp is more than');
      return { kind: 'refused', status: stale ? 400 : 401, error: verdict.reason };
    }
    if (headers.deliveryId && headers.deliveryId !== headers.webhookId) {
      return { kind: 'refused', status: 400, error: 'X-Slipway-Delivery and webhook-id differ' };
    }
    deliveryId = headers.webhookId;
  } else if (!secrets.some((secret) => verify(secret, raw, headers.signature))) {
    return {
      kind: 'refused',
      status: 401,
      error: 'X-Slipway-Signature is missing or does not match the body',
    };
  }
  if (!deliveryId || !/^[A-Za-z0-9_-]{1,100}$/.test(deliveryId)) {
    return { kind: 'refused', status: 400, error: 'X-Slipway-Delivery is missing or malformed' };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return { kind: 'refused', status: 400, error: 'the body is not JSON' };
  }
  const parsed = WebhookPayload.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    return { kind: 'refused', status: 400, error: `the body is not a Slipway delivery (${where})` };
  }
  if (headers.event && headers.event !== parsed.data.event) {
    return { kind: 'refused', status: 400, error: 'X-Slipway-Event does not match the body' };
  }
  const at = Date.parse(parsed.data.timestamp);
  if (Number.isNaN(at)) return { kind: 'refused', status: 400, error: 'timestamp is not a date' };
  if (Math.abs(deps.now().getTime() - at) > TIMESTAMP_TOLERANCE_MS) {
    return {
      kind: 'refused',
      status: 400,
      error: 'timestamp is more than 5 minutes away from now: refusing a stale or replayed delivery',
    };
  }
  if (deps.seen.checkAndAdd(deliveryId)) return { kind: 'duplicate', status: 200 };
  return { kind: 'accepted', status: 202, delivery: parsed.data, deliveryId: deliveryId };
}
