import type { Server } from 'node:http';
import { createServer, type Server as HttpsServer } from 'node:https';
import type { SecureContext } from 'node:tls';
import { EdgeResponse } from './private-answers.ts';
import { onCertificateChange } from '../certificates/certificate-signal.ts';
import { createSniCache } from '../certificates/sni-cache.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

export interface TlsEdgeOptions {
  /** The plain edge: its request and upgrade handlers serve TLS requests too. */
  edge: Server;
  /** The certificate context of a server name, or null when there is none. */
  contextFor(servername: string): Promise<SecureContext | null>;
}

/**
 * An HTTPS server that serves exactly what the edge serves, choosing each connection's
 * certificate by SNI. A name without a certificate (or a client that sends no SNI) fails the
 * handshake: there is no default certificate that could only be the wrong one.
 */
export function createTlsEdge(opts: TlsEdgeOptions): HttpsServer {
  const server = createServer({
    // As the plain edge's: a protected host's answers are made private (private-answers.ts).
    ServerResponse: EdgeResponse,
    SNICallback(servername, cb) {
      opts.contextFor(servername).then(
        (ctx) => (ctx ? cb(null, ctx) : cb(new Error(`no certificate for ${servername}`))),
        (err: unknown) => cb(err instanceof Error ? err : new Error(String(err))),
      );
    },
  });
  // The edge's handlers are shared rather than copied: one behaviour, one place.
  for (const listener of opts.edge.listeners('request')) server.on('request', listener as never);
  for (const listener of opts.edge.listeners('upgrade')) server.on('upgrade', listener as never);
  return server;
}

export interface TlsListener {
  server: HttpsServer;
  port: number;
  stop(): Promise<void>;
}

/** Starts the TLS listener on SLIPWAY_EDGE_TLS_PORT with certificates from the database. */
export async function startTlsListener(
  deps: Pick<Deps, 'db' | 'cipher' | 'log' | 'config' | 'store'>,
  edge: Server,
  port: number,
): Promise<TlsListener> {
  const cache = createSniCache(deps);
  const unsubscribe = onCertificateChange(deps, (domain) => cache.invalidate(domain ?? undefined));
  const server = createTlsEdge({ edge, contextFor: (name) => cache.contextFor(name) });
  server.on('tlsClientError', (err) => deps.log.debug({ err }, 'TLS handshake failed'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, deps.config.host, () => resolve());
  });
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : port,
    async stop() {
      unsubscribe();
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
