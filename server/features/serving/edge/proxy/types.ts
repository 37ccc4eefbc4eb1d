import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ByteCounter } from '../static.ts';

/**
 * Changes an app's answer before it goes out (the deployment's `_headers`, a `_redirects` 404):
 * may change the headers (lower-case names) in place; returns the status to send.
 */
export type AnswerShaper = (status: number, headers: OutgoingHttpHeaders) => number;

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

export interface ProxyOptions {
  connect?: DirectConnect;
  /** Whether `connect` would open a connection to the app on `port` now (its helper is ready). */
  canConnect?: (port: number) => boolean;
}
