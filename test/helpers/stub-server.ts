import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the stub received, body read in full. */
export interface StubRequest {
  method: string;
  /** Path and query, e.g. `/v1/projects?page=2`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface StubServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request so far, in arrival order. */
  requests: StubRequest[];
  close(): Promise<void>;
}

/**
 * A tiny real HTTP server on 127.0.0.1 whose answers the test decides, for behaviour a real
 * Slipway server does not show on demand (503s, proxies' HTML, dropped connections).
 */
export async function startStub(
  handler: (req: StubRequest, res: ServerResponse, index: number) => void | Promise<void>,
): Promise<StubServer> {
  const requests: StubRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(entry);
      Promise.resolve(handler(entry, res, requests.length - 1)).catch((err: unknown) => {
        res.destroy(err as Error);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends a JSON body with a status. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
