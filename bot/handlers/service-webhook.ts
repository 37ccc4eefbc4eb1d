import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bot } from '../context.ts';
import { syncDeployment } from '../preview/sync-deployment.ts';
import { acceptDelivery } from '../service/accept-delivery.ts';
import { SERVICE_WEBHOOK_PATH } from '../service/ensure-webhook.ts';

/** Deliveries are small JSON documents; anything bigger is not one. */
const MAX_BODY_BYTES = 1024 * 1024;

class TooLarge extends Error {}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        // The rest is drained unread, so the 413 still reaches the sender.
        req.removeAllListeners('data');
        req.resume();
        reject(new TooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: object) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * The receiver of the service's signed webhooks at `/slipway/webhooks`, as a Probot HTTP handler
 * (it answers `true` when the request was its own). It acknowledges an accepted delivery at once
 * (202) and updates GitHub afterwards, well inside the service's 10-second deadline.
 */
export function serviceWebhookHandler(bot: Bot) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const path = new URL(req.url ?? '/', 'http://bot').pathname.replace(/\/+$/, '');
    if (path !== SERVICE_WEBHOOK_PATH) return false;
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      send(res, 405, { error: 'POST deliveries here' });
      return true;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, MAX_BODY_BYTES);
    } catch (err) {
      if (err instanceof TooLarge) send(res, 413, { error: 'the body is larger than 1 MiB' });
      else res.destroy();
      return true;
    }
    const result = acceptDelivery(
      raw,
      {
        signature: header(req, 'x-slipway-signature'),
        deliveryId: header(req, 'x-slipway-delivery'),
        event: header(req, 'x-slipway-event'),
        webhookId: header(req, 'webhook-id'),
        webhookTimestamp: header(req, 'webhook-timestamp'),
        webhookSignature: header(req, 'webhook-signature'),
      },
      {
        secret: bot.settings.serviceWebhookSecret,
        previousSecret: bot.settings.previousServiceWebhookSecret,
        seen: bot.seen,
        now: bot.now,
      },
    );
    if (result.kind === 'refused') {
      bot.log.warn({ status: result.status, error: result.error }, 'service webhook refused');
      send(res, result.status, { error: result.error });
      return true;
    }
    if (result.kind === 'duplicate') {
      send(res, 200, { ok: true, duplicate: true });
      return true;
    }
    send(res, 202, { ok: true });
    const { delivery } = result;
    const deploymentId = delivery.data.deploymentId;
    if (delivery.event.startsWith('deployment.') && typeof deploymentId === 'string') {
      bot.tasks.start(`${delivery.event} ${deploymentId}`, () => syncDeployment(bot, deploymentId));
    }
    return true;
  };
}
