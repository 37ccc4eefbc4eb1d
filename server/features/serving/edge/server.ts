import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { EdgeResponse } from './private-answers.ts';
import { createEdgeContext } from './server/context.ts';
import { handleRequest } from './server/serve.ts';
import type { EdgeServerOptions } from './server/types.ts';
import { handleUpgrade } from './server/upgrade.ts';

export type { EdgeServerOptions, RequestRecord } from './server/types.ts';

/**
 * The edge: a plain node:http server that serves every deployment by its Host header. Its parts,
 * in server/: context.ts (what every request shares), serve.ts (a request, recorded), answer.ts
 * (by its resolution, behind any protection), app-rules.ts (a server app's `_redirects` and
 * `_headers`), to-app.ts (to the app's process or the files), upgrade.ts (WebSocket).
 */
export function createEdgeServer(opts: EdgeServerOptions): Server {
  const edge = createEdgeContext(opts);
  // EdgeResponse: a protected host's answers are made private in one place (private-answers.ts).
  const server = createServer({ ServerResponse: EdgeResponse }, (req: IncomingMessage, res: ServerResponse) =>
    handleRequest(edge, req, res),
  );
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    handleUpgrade(edge, req, socket, head),
  );
  server.on('close', () => {
    edge.proxy.close();
    edge.compressed.stop();
  });
  return server;
}
