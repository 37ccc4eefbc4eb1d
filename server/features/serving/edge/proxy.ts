import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  STATUS_CODES,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { DEPLOYMENT_HEADER } from '../../../core/edge-headers.ts';
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

/**
 * Request headers never passed on as received: the hop-by-hop ones; `expect`, which the edge's
 * own server has answered already (`100 Continue`); and the X-Forwarded-* fields the edge sets.
 */
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'expect',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
]);

/** Answers an upgrade request that will not be forwarded, and closes the connection. */
export function refuseUpgrade(socket: Duplex, status: number): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
  );
}

/** The names a `Connection` header lists: hop-by-hop too, for that one message (RFC 9110 7.6.1). */
function connectionOptions(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const names = String(value)
    .split(',')
    .map((h) => h.trim().toLowerCase());
  return names.length === 1 && (names[0] === 'keep-alive' || names[0] === 'close') ? null : new Set(names);
}

/** The X-Forwarded-* fields for a request from `req`'s client, as [name, value, ...]. */
function forwardedFields(req: IncomingMessage): string[] {
  const client = req.socket.remoteAddress ?? '';
  const prior = req.headers['x-forwarded-for'];
  return [
    'x-forwarded-for',
    prior ? `${String(prior)}, ${client}` : client,
    'x-forwarded-host',
    req.headers.host ?? '',
    'x-forwarded-proto',
    (req.socket as TLSSocket).encrypted ? 'https' : 'http',
  ];
}

/**
 * The request's end-to-end fields as a flat [name, value, ...] list, the X-Forwarded-* ones last.
 * From `req.headers`, so that what the edge removed there (its probe token) stays removed.
 */
function requestFields(req: IncomingMessage): string[] {
  const headers = req.headers;
  const named = connectionOptions(headers.connection);
  const out: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || NOT_FORWARDED.has(name) || named?.has(name)) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const v of value) out.push(name, v);
  }
  out.push(...forwardedFields(req));
  return out;
}

/** The response's end-to-end fields for `writeHead`, after the deployment's name. */
function responseFields(deploymentId: string, headers: IncomingHttpHeaders): string[] {
  const named = connectionOptions(headers.connection);
  const out = [DEPLOYMENT_HEADER, deploymentId];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name)) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const v of value) out.push(name, v);
  }
  return out;
}

/**
 * Changes an app's answer before it goes out (the deployment's `_headers`, a `_redirects` 404):
 * may change the headers (lower-case names) in place; returns the status to send.
 */
export type AnswerShaper = (status: number, headers: OutgoingHttpHeaders) => number;

/** The response's end-to-end fields as an object, for a shaper to change. */
function responseObject(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionOptions(headers.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named?.has(name)) out[name] = value;
  }
  return out;
}

/** Whether a request carries a body (RFC 9112 6.3): a GET without one is sent without a stream. */
const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * One request on its way to an app and back: the handler undici calls. A class rather than
 * closures, so a request allocates one object for it.
 */
class Forwarding implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | null = null;
  /** Whether a chunk of the body was written (with it, the head). */
  wrote = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly deploymentId: string,
    readonly counter: ByteCounter,
    readonly shape: AnswerShaper | undefined,
  ) {
    // The client left: stop the app's work on its behalf.
    res.once('close', () => {
      if (!res.writableFinished) this.controller?.abort(new Error('the client closed the connection'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    const { res } = this;
    // 1xx answers (103 Early Hints) are not passed on; the final answer follows.
    if (statusCode < 200 || res.destroyed) return;
    if (this.shape) {
      const fields = responseObject(headers);
      const shaped = this.shape(statusCode, fields);
      fields[DEPLOYMENT_HEADER] = this.deploymentId;
      // A changed status gets its own reason phrase, not the app's.
      if (shaped === statusCode) res.writeHead(statusCode, statusMessage || undefined, fields);
      else res.writeHead(shaped, fields);
    } else {
      res.writeHead(statusCode, statusMessage || undefined, responseFields(this.deploymentId, headers));
    }
    // Backpressure: the app's answer waits while the client's connection is full.
    res.on('drain', () => controller.resume());
    // Node sends the head with the first body write; an app that sent its head ahead of its body
    // (a page streamed as it renders) would have it held here until then. Once what came with
    // the head is written, it goes out if no body did.
    process.nextTick(flushHead, this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.wrote = true;
    this.counter.bytes += chunk.length;
    if (!this.res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, _err: Error): void {
    const { req, res } = this;
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    res.setHeader(DEPLOYMENT_HEADER, this.deploymentId);
    this.counter.bytes += sendPage(req, res, EDGE_PAGES.notResponding());
  }
}

/** Sends a forwarded answer's head now when no body went with it (see onResponseStart). */
function flushHead(f: Forwarding): void {
  const { res } = f;
  if (!f.wrote && !res.writableEnded && !res.destroyed) res.flushHeaders();
}

export interface Proxy {
  /**
   * Forwards the request to the app on 127.0.0.1:port, streaming both bodies, its answer named
   * by `deploymentId`; the 502 page when the app is down.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    port: number,
    counter: ByteCounter,
    deploymentId: string,
    shape?: AnswerShaper,
  ): void;
  /** Hands an upgrade request (WebSocket) to the app and joins the two connections. */
  forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, port: number): void;
  /**
   * Whether a request to the app on `port` is on its way or being answered (a streamed answer
   * until its end), or a WebSocket to it is open: what keeps an app from being stopped as idle.
   * Read from undici's pool counts when asked, so forwarding pays nothing for it.
   */
  inUse(port: number): boolean;
  /** Closes the kept-alive connections to apps. */
  close(): void;
}

/**
 * Opens a connection to the app on `port` from inside its sandbox (RuntimeSupervisor's
 * openConnection): false when it cannot, and the proxy connects to 127.0.0.1:port instead.
 */
export type DirectConnect = (port: number, done: (socket: Socket | null) => void) => boolean;

/**
 * The proxy to the apps `supervisor` runs: connections opened from inside each app's sandbox when
 * it can (RuntimeSupervisor's openConnection), else to 127.0.0.1:port.
 */
export function proxyFor(supervisor?: {
  openConnection?: DirectConnect;
  canConnect?: (port: number) => boolean;
}): Proxy {
  return createProxy(
    supervisor?.openConnection && supervisor.canConnect
      ? {
          connect: (port, done) => supervisor.openConnection!(port, done),
          canConnect: (port) => supervisor.canConnect!(port),
        }
      : {},
  );
}

export function createProxy(
  opts: {
    connect?: DirectConnect;
    /** Whether `connect` would open a connection to the app on `port` now (its helper is ready). */
    canConnect?: (port: number) => boolean;
  } = {},
): Proxy {
  const tcp = buildConnector({});
  const direct = opts.connect;
  const canConnect = opts.canConnect;
  // Connections to each app are kept and reused (undici's pool per origin, dropped once all its
  // connections are closed), saving a TCP handshake and a forwarded connection per request. A
  // new one comes from inside the app's sandbox when it can (no pasta between the edge and the
  // app), else through pasta's forwarded port. No time limits of its own: an app may stream
  // (server-sent events) or think as long as it likes, as it could before; the client leaving
  // ends the request.
  const agent = new Agent({
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 4000,
    // A connection made through pasta (while the app's helper starts) is replaced in time.
    maxRequestsPerClient: 1000,
    connect: direct
      ? (options, callback) => {
          const through = (socket: Socket | null) => {
            if (!socket) return tcp(options, callback);
            // As undici does for its own: a request's head and body, written apart, go at once.
            socket.setNoDelay(true);
            callback(null, socket);
          };
          if (!direct(Number(options.port), through)) tcp(options, callback);
        }
      : tcp,
  });
  // While an app's helper is not ready (the app just started), its requests go through pasta's
  // forwarded port on connections of their own, so that none of those is kept once the helper is
  // up: pasta holds a small write behind an unacknowledged one (Nagle), and a streamed answer
  // (headers flushed, then the body) waited about 40 ms for the edge's delayed ACK on each such
  // connection, for its first 1000 requests. Unused once the helper is ready; they close idle.
  const throughPasta =
    direct && canConnect
      ? new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 1000, connect: tcp })
      : null;
  const origins = new Map<number, string>();
  /** Open WebSockets per app port. */
  const upgrades = new Map<number, number>();

  return {
    forward(req, res, port, counter, deploymentId, shape) {
      let origin = origins.get(port);
      if (origin === undefined) {
        origin = `http://127.0.0.1:${port}`;
        if (origins.size > 10_000) origins.clear();
        origins.set(port, origin);
      }
      const withBody = hasBody(req);
      // No body: nothing to stream, and the request's end is not waited for.
      if (!withBody) req.resume();
      const via = throughPasta && !canConnect!(port) ? throughPasta : agent;
      via.dispatch(
        {
          origin,
          path: req.url ?? '/',
          method: req.method as Dispatcher.HttpMethod,
          headers: requestFields(req),
          body: withBody ? req : null,
        },
        new Forwarding(req, res, deploymentId, counter, shape),
      );
    },
    forwardUpgrade(req, socket, head, port) {
      upgrades.set(port, (upgrades.get(port) ?? 0) + 1);
      // Counted until the visitor leaves (its end or close, whichever comes first), not until the
      // app lets go: an app holding a socket nobody is on keeps no app from going idle.
      let counted = true;
      const left = () => {
        if (!counted) return;
        counted = false;
        const open = (upgrades.get(port) ?? 1) - 1;
        if (open > 0) upgrades.set(port, open);
        else upgrades.delete(port);
      };
      socket.once('end', left);
      socket.once('close', left);
      forwardUpgrade(req, socket, head, port);
    },
    inUse(port) {
      if (upgrades.has(port)) return true;
      const origin = `http://127.0.0.1:${port}`;
      return (agent.stats[origin]?.size ?? 0) > 0 || (throughPasta?.stats[origin]?.size ?? 0) > 0;
    },
    close() {
      void agent.destroy().catch(() => undefined);
      void throughPasta?.destroy().catch(() => undefined);
    },
  };
}

/** Hands an upgrade request (WebSocket) to the app on 127.0.0.1:port and joins the two connections. */
function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, port: number): void {
  const upstream = connect({ port, host: '127.0.0.1' });
  let connected = false;
  upstream.once('connect', () => {
    connected = true;
    // The upgrade headers (Connection, Upgrade, Sec-WebSocket-*) are the point here: pass them
    // all as received, replacing only the X-Forwarded-* ones, and leaving out what the edge
    // removed from req.headers (its probe token).
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!.toLowerCase();
      if (!name.startsWith('x-forwarded-') && req.headers[name] !== undefined) {
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
    }
    const fields = forwardedFields(req);
    for (let i = 0; i < fields.length; i += 2) lines.push(`${fields[i]}: ${fields[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    socket.pipe(upstream).pipe(socket);
  });
  upstream.on('error', () => {
    if (connected) socket.destroy();
    else refuseUpgrade(socket, 502);
  });
  socket.on('close', () => upstream.destroy());
}
