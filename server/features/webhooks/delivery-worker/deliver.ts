import { z } from 'zod';
import { decodeJson } from '../../../core/json-column.ts';
import { attemptDelivery } from '../attempt-delivery.ts';
import { releaseClaim, type ClaimedDelivery } from '../delivery-claims.ts';
import { dropOrphan, recordAttempt, skipDelivery } from '../record-attempt.ts';
import type { WorkerState } from './state.ts';

const INACTIVE = 'not sent: the webhook is inactive because its receiver answered 410 Gone';

/** One attempt at a delivery, recorded; given back unrecorded when `stop` interrupts it. */
export async function deliver(w: WorkerState, d: ClaimedDelivery, stop: AbortSignal): Promise<void> {
  const { deps } = w;
  if (!d.webhook) return dropOrphan(deps.db, d);
  if (!d.webhook.active) {
    await skipDelivery(deps.db, deps.clock, d, INACTIVE);
    return;
  }
  const at = deps.clock.now().toISOString();
  let secret: string;
  try {
    secret = deps.cipher.decrypt(d.webhook.secretCiphertext);
  } catch (err) {
    // Retried: the operator can fix SLIPWAY_ENCRYPTION_KEY and the delivery then goes out.
    const error = `cannot sign the delivery: ${(err as Error).message}`;
    await recordAttempt(deps.db, deps.clock, d, {
      at,
      durationMs: 0,
      outcome: { kind: 'failed', statusCode: null, error },
    });
    return;
  }
  // Each attempt is stamped with the time it is sent: receivers reject timestamps more than five
  // minutes away, and a retry after an outage must still be accepted. The delivery id stays.
  const payload = restamp(d.payload, at);
  const result = await attemptDelivery(
    { ...d, payload, url: d.webhook.url, secret, at: new Date(at) },
    { ...w.io, stop },
  );
  if (result.kind === 'interrupted') return releaseClaim(deps.queue, d);
  const status = await recordAttempt(
    deps.db,
    deps.clock,
    d,
    { at, durationMs: result.durationMs, outcome: result.outcome },
    w.random,
  );
  deps.log.debug(
    { delivery: d.id, webhook: d.webhookId, attempt: d.attempt, outcome: result.outcome, status },
    'webhook delivery attempt',
  );
}

/** The stored payload with `timestamp` set to `at`; anything unparsable is sent as stored. */
function restamp(payload: string, at: string): string {
  try {
    const parsed = decodeJson(z.record(z.string(), z.unknown()), payload, 'A delivery’s payload');
    return JSON.stringify({ ...parsed, timestamp: at });
  } catch {
    return payload;
  }
}
