import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, type SlipwayClient } from '../../api/client/index.ts';
import { createSeenIds } from '../lib/seen-ids.ts';
import { orderingKey } from './ordering-key.ts';

/** GitHub caps a delivery at 25 MB. */
const MAX_BODY = 25 * 1024 * 1024;

export interface ReceiverOptions {
  slipway: SlipwayClient;
  verify(body: string, signature: string): Promise<boolean>;
  /** Called once an event is stored: the processor looks at once. */
  stored(): void;
  /** When the service cannot store it: handle the event now, before answering (as without a queue). */
  handleNow(event: { id: string; name: string; payload: unknown }): Promise<void>;
  log: Logger;
  /** The App's clock (its services' `now`): how long a handled event is remembered. Default the system's. */
  now?: () => Date;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * GitHub's webhook deliveries to the App: verified, stored in the service's queue and answered
 * with 202 at once; the processor does the work afterwards. GitHub gives a delivery 10 seconds,
 * and the App's GitHub writes are spaced a second apart, so nothing of that is on this path.
 */
export function createReceiver(opts: ReceiverOptions) {
  // Events handled without the queue, by name and body digest: a replay under a new delivery id
  // is not handled twice by this process either (the queue does this for every process).
  const now = opts.now ?? (() => new Date());
  const handled = createSeenIds(() => now().getTime(), 7 * 24 * 3_600_000);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = String(req.headers['x-github-delivery'] ?? '');
    const name = String(req.headers['x-github-event'] ?? '');
    const signature = String(req.headers['x-hub-signature-256'] ?? '');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) return answer(res, 413, { error: 'delivery larger than 25 MB' });
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks).toString('utf8');
    if (!id || !name || !signature) {
      return answer(res, 400, {
        error: 'x-github-delivery, x-github-event and x-hub-signature-256 are required',
      });
    }
    if (!(await opts.verify(body, signature))) return answer(res, 400, { error: 'signature does not match' });
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      return answer(res, 400, { error: 'body is not JSON' });
    }
    try {
      const stored = await opts.slipway.githubEvents.store({
        deliveryId: id,
        name,
        body,
        signature,
        orderingKey: orderingKey(payload),
      });
      answer(res, 202, { ok: true, id: stored.id, duplicate: stored.duplicate });
      opts.stored();
    } catch (err) {
      // Without the queue the event is handled as before: now, and answered once handled.
      if (err instanceof ApiError && err.status === 403) {
        // SLIPWAY_API_TOKEN is not the App's kind of token: the message says how to make one.
        opts.log.error(
          { delivery: id, error: err.message },
          'the service refuses this bot the event queue; handling the event now',
        );
      } else {
        opts.log.warn(
          { err, delivery: id },
          'could not store a GitHub event in the service; handling it now',
        );
      }
      const digest = `${name} ${createHash('sha256').update(body, 'utf8').digest('hex')}`;
      if (handled.checkAndAdd(digest)) return answer(res, 200, { ok: true, duplicate: true });
      try {
        await opts.handleNow({ id, name, payload });
        answer(res, 200, { ok: true });
      } catch (handlerErr) {
        handled.forget(digest); // GitHub's redelivery (the same body) must do it again
        opts.log.error({ err: handlerErr, delivery: id }, 'GitHub event failed');
        answer(res, 500, { error: 'the event failed; GitHub can redeliver it' });
      }
    }
  };
}
