import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { forwardedFields } from './fields.ts';

/** Answers an upgrade request that will not be forwarded, and closes the connection. */
export function refuseUpgrade(socket: Duplex, status: number): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
  );
}

/** Hands an upgrade request (WebSocket) to the app on 127.0.0.1:port and joins the two connections. */
export function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, port: number): void {
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
