import type { Socket } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { DirectConnect, ProxyOptions } from './types.ts';

/** What one proxy keeps (createProxy makes it once), passed to its functions. */
export interface ProxyState {
  /** Kept connections to the apps: from inside their sandboxes when it can (see createProxyState). */
  agent: Agent;
  /** Connections of their own through pasta while an app's helper is not ready; null without one. */
  throughPasta: Agent | null;
  /** ProxyOptions.canConnect. */
  canConnect: ((port: number) => boolean) | undefined;
  /** `http://127.0.0.1:<port>` by port, made once. */
  origins: Map<number, string>;
  /** Open WebSockets per app port. */
  upgrades: Map<number, number>;
}

export function createProxyState(opts: ProxyOptions): ProxyState {
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
    connect: direct ? insideSandbox(direct, tcp) : tcp,
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
  return { agent, throughPasta, canConnect, origins: new Map(), upgrades: new Map() };
}

/** A connector that opens a connection from inside the app's sandbox, else with `tcp`. */
function insideSandbox(direct: DirectConnect, tcp: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    const through = (socket: Socket | null) => {
      if (!socket) return tcp(options, callback);
      // As undici does for its own: a request's head and body, written apart, go at once.
      socket.setNoDelay(true);
      callback(null, socket);
    };
    if (!direct(Number(options.port), through)) tcp(options, callback);
  };
}
