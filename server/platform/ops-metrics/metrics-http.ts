import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { OpsMetrics } from './ops-metrics.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * True when `authorization` is `Bearer <token>` (compared in constant time), or when no token is
 * set (the metrics listener then relies on where it listens: 127.0.0.1 by default).
 */
export function metricsAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}

const UNAUTHORIZED =
  'Metrics need the operator token: Authorization: Bearer <SLIPWAY_METRICS_TOKEN> (API tokens are not accepted).\n';

/** `/metrics` on the API (only when SLIPWAY_METRICS_TOKEN is set; else the API has no such route). */
export function registerMetricsRoute(app: FastifyInstance, ops: OpsMetrics, token: string): void {
  app.get('/metrics', async (req, reply) => {
    if (!metricsAllowed(req.headers.authorization, token)) {
      return reply.status(401).header('www-authenticate', 'Bearer').type('text/plain').send(UNAUTHORIZED);
    }
    const body = await ops.scrape();
    return reply.type(ops.registry.contentType).header('cache-control', 'no-store').send(body);
  });
}

export interface MetricsServer {
  server: Server;
  port: number;
  stop(): Promise<void>;
}

/** The metrics listener of one process (SLIPWAY_METRICS_PORT): `GET /metrics` and nothing else. */
export async function startMetricsServer(opts: {
  ops: OpsMetrics;
  port: number;
  host: string;
  token: string | undefined;
  onError?: (err: unknown) => void;
}): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    if (!metricsAllowed(req.headers.authorization, opts.token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end(UNAUTHORIZED);
      return;
    }
    opts.ops.scrape().then(
      (body) => {
        res.writeHead(200, { 'content-type': opts.ops.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        opts.onError?.(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('Collecting metrics failed; see the log.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    server,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
