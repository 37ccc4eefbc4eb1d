import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  Agent,
  STATUS_CODES,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { TLSSocket } from 'node:tls';
import { EDGE_PAGES, sendPage } from './pages.ts';
import type { ByteCounter } from './static.ts';

/** Headers about one connection, which a proxy must not pass on (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The X-Forwarded-* headers for a request from `req`'s client. */
function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const client = req.socket.remoteAddress ?? '';
  const prior = req.headers['x-forwarded-for'];
  return {
    'x-forwarded-for': prior ? `${String(prior)}, ${client}` : client,
    'x-forwarded-host': req.headers.host ?? '',
    'x-forwarded-proto': (req.socket as TLSSocket).encrypted ? 'https' : 'http',
  };
}

/** Answers an upgrade request that will not be forwarded, and closes the connection. */
export function refuseUpgrade(socket: Duplex, status: number): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
  );
}

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const out: IncomingHttpHeaders = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(key) && !named.includes(key)) out[key] = value;
  }
  return out;
}

/**
 * Changes an app's answer before it goes out (the deployment's `_headers`, a `_redirects` 404):
 * may change the headers (lower-case names) in place; returns the status to send.
 */
export type AnswerShaper = (status: number, headers: OutgoingHttpHeaders) => number;

export interface Proxy {
  /** Forwards the request to the app on 127.0.0.1:port, streaming both bodies; 502 page when it is down. */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    port: number,
    counter: ByteCounter,
    shape?: AnswerShaper,
  ): Promise<void>;
  /** Hands an upgrade request (WebSocket) to the app and joins the two connections. */
  forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, port: number): void;
  /** Closes the kept-alive connections to apps. */
  close(): void;
}

export function createProxy(): Proxy {
  // Reusing connections to the apps saves a TCP handshake per request.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });

  return {
    forward(req, res, port, counter, shape) {
      return new Promise<void>((resolve) => {
        const headers = { ...endToEnd(req.headers), ...forwardedHeaders(req) };

        const upstream = request({
          host: '127.0.0.1',
          port,
          method: req.method,
          path: req.url,
          headers,
          agent,
        });
        let settled = false;
        const done = () => {
          if (settled) return;
          settled = true;
          resolve();
        };
        upstream.on('response', (answer) => {
          const status = answer.statusCode ?? 502;
          if (shape) {
            const headers: OutgoingHttpHeaders = endToEnd(answer.headers);
            const shaped = shape(status, headers);
            // A changed status gets its own reason phrase, not the app's.
            if (shaped === status) res.writeHead(status, answer.statusMessage, headers);
            else res.writeHead(shaped, headers);
          } else {
            res.writeHead(status, answer.statusMessage, endToEnd(answer.headers));
          }
          answer.on('data', (chunk: Buffer) => {
            counter.bytes += chunk.length;
          });
          answer.pipe(res);
          answer.on('error', () => res.destroy());
          answer.on('end', done);
        });
        upstream.on('error', () => {
          if (!res.headersSent) {
            counter.bytes += sendPage(req, res, EDGE_PAGES.notResponding());
          } else {
            res.destroy();
          }
          done();
        });
        // The client left: stop the app's work on its behalf.
        res.on('close', () => {
          if (!res.writableFinished) upstream.destroy();
          done();
        });
        req.pipe(upstream);
      });
    },
    forwardUpgrade(req, socket, head, port) {
      const upstream = connect({ port, host: '127.0.0.1' });
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        // The upgrade headers (Connection, Upgrade, Sec-WebSocket-*) are the point here: pass them
        // all as received, replacing only the X-Forwarded-* ones.
        const lines = [`${req.method} ${req.url} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          if (!req.rawHeaders[i]!.toLowerCase().startsWith('x-forwarded-')) {
            lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
          }
        }
        for (const [name, value] of Object.entries(forwardedHeaders(req))) lines.push(`${name}: ${value}`);
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) upstream.write(head);
        socket.pipe(upstream).pipe(socket);
      });
      upstream.on('error', () => {
        if (connected) socket.destroy();
        else refuseUpgrade(socket, 502);
      });
      socket.on('close', () => upstream.destroy());
    },
    close() {
      agent.destroy();
    },
  };
}
